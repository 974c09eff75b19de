package teebody

import (
	"errors"
	"testing"
)

// TestReasonTable checks that every Reason below reasonEnd has a label and
// words of its own, so that a reason added without its entry fails here, and
// that the values beyond the table are "unknown".
func TestReasonTable(t *testing.T) {
	labels, texts := map[string]bool{}, map[string]bool{}
	for r := Reason(1); r < reasonEnd; r++ {
		label, text := r.String(), notReplayable(r).Error()
		if label == "unknown" || labels[label] || texts[text] || text == ErrNotReplayable.Error() {
			t.Errorf("reason %d: label %q, error %q: missing or twice", int(r), label, text)
		}
		labels[label], texts[text] = true, true
	}
	for _, r := range []Reason{0, reasonEnd, -1} {
		if r.String() != "unknown" || notReplayable(r).Error() != ErrNotReplayable.Error() {
			t.Errorf("reason %d: %q, %q; want unknown", int(r), r.String(), notReplayable(r).Error())
		}
	}
}

// TestNotReplayableErrorIsAValue checks what callers rely on: the error for a
// reason is compared by its reason, and a copy read out with errors.As is the
// caller's own, so nothing a caller does with it changes what the Tee hands
// out next.
func TestNotReplayableErrorIsAValue(t *testing.T) {
	if notReplayable(ReasonNoBudget) != errNoBudget || notReplayable(ReasonNoBudget) == errTooLarge {
		t.Error("errors of one reason differ, or of two reasons match")
	}
	var nre NotReplayableError
	if !errors.As(errNoBudget, &nre) || nre.Reason() != ReasonNoBudget {
		t.Fatalf("errors.As: %v, reason %v", nre, nre.Reason())
	}
	nre = NotReplayableError{}
	if errNoBudget.(NotReplayableError).Reason() != ReasonNoBudget {
		t.Error("a caller's copy changed the shared error")
	}
}

func TestNotReplayableAllocatesNothing(t *testing.T) {
	var err error
	if n := testing.AllocsPerRun(100, func() { err = notReplayable(ReasonYielded) }); n != 0 {
		t.Errorf("NotReplayable: %v allocations, want 0", n)
	}
	if !errors.Is(err, ErrNotReplayable) {
		t.Errorf("%v does not match ErrNotReplayable", err)
	}
}
