package teebody

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
)

// TestReasonTable checks that every Reason below reasonEnd has a label and
// words of its own, so that a reason added without its entry fails here, and
// that the values beyond the table are "unknown" and the zero value "none".
func TestReasonTable(t *testing.T) {
	labels, texts := map[string]bool{}, map[string]bool{}
	for r := Reason(1); r < reasonEnd; r++ {
		label, text := r.String(), notReplayable(r).Error()
		if label == "unknown" || label == "none" || labels[label] || texts[text] || text == ErrNotReplayable.Error() {
			t.Errorf("reason %d: label %q, error %q: missing or twice", int(r), label, text)
		}
		labels[label], texts[text] = true, true
	}
	for r, want := range map[Reason]string{0: "none", reasonEnd: "unknown", -1: "unknown"} {
		if r.String() != want || notReplayable(r).Error() != ErrNotReplayable.Error() {
			t.Errorf("reason %d: %q, %q; want %s and the bare error", int(r), r.String(), notReplayable(r).Error(), want)
		}
	}
}

// TestNotReplayableErrorIsAValue checks what callers rely on: the error for a
// reason is compared by its reason, and a copy read out with errors.As is the
// caller's own, so nothing a caller does with it changes what the Tee hands
// out next. A copy is the caller's own exactly when the type holds no
// reference (pointer, slice, map, interface...) that copies would share, so
// the test checks the type's layout, then changes a copy read out of a real
// refusal and checks the Tee's next refusal.
func TestNotReplayableErrorIsAValue(t *testing.T) {
	if notReplayable(ReasonNoBudget) != errNoBudget || notReplayable(ReasonNoBudget) == errTooLarge {
		t.Error("errors of one reason differ, or of two reasons match")
	}
	if path, ok := sharesMemory(reflect.TypeFor[NotReplayableError](), "NotReplayableError"); ok {
		t.Errorf("%s is shared by every copy of a NotReplayableError", path)
	}

	// In a bubble, so that a Tee that hangs fails at once.
	synctest.Test(t, func(t *testing.T) {
		tee := New(io.NopCloser(strings.NewReader("body")), WithBudget(NewBudget(0)))
		defer closeAndWait(t, tee)
		if _, err := io.ReadAll(mustReader(t, tee)); err != nil {
			t.Fatal(err)
		}
		refusal := func() NotReplayableError {
			t.Helper()
			_, err := tee.NewReader()
			var nre NotReplayableError
			if !errors.As(err, &nre) {
				t.Fatalf("NewReader: %v, want a NotReplayableError read out with errors.As", err)
			}
			return nre
		}
		mine := refusal()
		if mine.Reason() != ReasonNoBudget {
			t.Fatalf("refusal: reason %v, want %v", mine.Reason(), ReasonNoBudget)
		}
		mine.reason = ReasonTooLarge // what a caller holds, changed
		if mine.Reason() != ReasonTooLarge {
			t.Fatalf("a caller's copy did not take the change: %v", mine.Reason())
		}
		if got := refusal(); got.Reason() != ReasonNoBudget || got != errNoBudget {
			t.Errorf("after a caller changed its copy, the Tee refuses with %v (%v), want %v", got, got.Reason(), ReasonNoBudget)
		}
		if got := tee.ReplayErr(); got != errNoBudget {
			t.Errorf("after a caller changed its copy, ReplayErr = %v, want %v", got, errNoBudget)
		}
	})
}

// sharesMemory reports the first part of a value of type typ, named path,
// that refers to memory outside the value, which copies of it would share.
func sharesMemory(typ reflect.Type, path string) (string, bool) {
	switch typ.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128,
		reflect.String: // immutable: sharing its bytes is harmless
		return "", false
	case reflect.Array:
		return sharesMemory(typ.Elem(), path+"[i]")
	case reflect.Struct:
		for i := range typ.NumField() {
			f := typ.Field(i)
			if p, ok := sharesMemory(f.Type, path+"."+f.Name); ok {
				return p, true
			}
		}
		return "", false
	}
	return path + " (" + typ.Kind().String() + ")", true // pointers, slices, maps, interfaces, funcs, chans
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
