package teebody

import (
	"bytes"
	"io"
	"testing"
)

// TestUsage follows one Tee through a send, a replay and a refusal, and
// checks what Usage reports at each step.
func TestUsage(t *testing.T) {
	body := randomBytes(200<<10, 1)
	tee := New(io.NopCloser(bytes.NewReader(body)))
	defer tee.Close()
	if u := tee.Usage(); u != (Usage{}) {
		t.Fatalf("a new Tee's Usage = %+v, want the zero Usage", u)
	}

	first, _ := tee.NewReader()
	second, _ := tee.NewReader() // handed out, never read: it is no send
	if u := tee.Usage(); u != (Usage{}) {
		t.Fatalf("two followers handed out, none read: Usage = %+v, want the zero Usage", u)
	}
	if _, err := io.ReadAll(first); err != nil {
		t.Fatal(err)
	}
	third, _ := tee.NewReader()
	if _, err := io.ReadAll(third); err != nil {
		t.Fatal(err)
	}
	u := tee.Usage()
	if u.ReadFrom != 2 || !u.NewestRead || u.Refused != 0 {
		t.Fatalf("after two reads: %+v, want ReadFrom 2, NewestRead true, Refused 0", u)
	}
	if u.PeakBytes < int64(len(body)) {
		t.Fatalf("PeakBytes = %d, want at least the %d bytes of the body kept", u.PeakBytes, len(body))
	}
	second.Close()

	tee.Seal()
	if _, err := tee.NewReader(); err == nil {
		t.Fatal("NewReader after Seal succeeded")
	}
	tee.Close()
	if _, err := tee.NewReader(); err == nil {
		t.Fatal("NewReader after Close succeeded")
	}
	after := tee.Usage()
	if after.Refused != ReasonStreamedPast {
		t.Errorf("Refused = %v, want the first refusal, %v", after.Refused, ReasonStreamedPast)
	}
	if after.PeakBytes != u.PeakBytes {
		t.Errorf("PeakBytes went from %d to %d once chunks were dropped; want the peak kept", u.PeakBytes, after.PeakBytes)
	}
}

// TestUsageTooLarge checks that a body over its limit reports why its replay
// was refused, and a peak within the limit.
func TestUsageTooLarge(t *testing.T) {
	const limit = 64 << 10
	tee := New(io.NopCloser(bytes.NewReader(randomBytes(1<<20, 2))), WithLimit(limit))
	defer tee.Close()
	first, _ := tee.NewReader()
	if _, err := io.ReadAll(first); err != nil {
		t.Fatal(err)
	}
	if _, err := tee.NewReader(); err == nil {
		t.Fatal("a replay of a body over its limit succeeded")
	}
	u := tee.Usage()
	if u.Refused != ReasonTooLarge || u.ReadFrom != 1 {
		t.Fatalf("Usage = %+v, want ReadFrom 1, Refused %v", u, ReasonTooLarge)
	}
	if u.PeakBytes == 0 || u.PeakBytes > limit {
		t.Fatalf("PeakBytes = %d, want within (0, %d]", u.PeakBytes, limit)
	}
}

// TestUsageClosedFirst checks that a first follower refused by a closed Tee
// counts as a refusal.
func TestUsageClosedFirst(t *testing.T) {
	tee := New(io.NopCloser(bytes.NewReader(nil)))
	tee.Close()
	if _, err := tee.NewReader(); err == nil {
		t.Fatal("NewReader on a closed Tee succeeded")
	}
	if u := tee.Usage(); u != (Usage{Refused: ReasonClosed}) {
		t.Fatalf("Usage = %+v, want only Refused %v", u, ReasonClosed)
	}
}

// TestUsageReadFromCountsSends checks what counts as a follower read from: a
// Read that returned bytes or the source's end, not one that failed at once
// on a closed follower. NewestRead follows the newest follower.
func TestUsageReadFromCountsSends(t *testing.T) {
	tee := New(io.NopCloser(bytes.NewReader([]byte("body"))))
	defer tee.Close()
	closed, _ := tee.NewReader()
	closed.Close()
	if _, err := closed.Read(make([]byte, 8)); err != ErrClosed {
		t.Fatalf("Read on a closed follower: %v, want ErrClosed", err)
	}
	if u := tee.Usage(); u.ReadFrom != 0 || u.NewestRead {
		t.Fatalf("after a Read that failed at once: %+v; want ReadFrom 0, NewestRead false", u)
	}
	newest, _ := tee.NewReader()
	if _, err := io.ReadAll(newest); err != nil {
		t.Fatal(err)
	}
	if u := tee.Usage(); u.ReadFrom != 1 || !u.NewestRead {
		t.Fatalf("after the newest follower's read: %+v; want ReadFrom 1, NewestRead true", u)
	}
	if _, err := tee.NewReader(); err != nil {
		t.Fatal(err)
	}
	if u := tee.Usage(); u.NewestRead {
		t.Fatalf("with a newer follower, not read: %+v; want NewestRead false", u)
	}
}
