package teebody

import (
	"bytes"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// countedNoProgress is a source whose Reads return neither bytes nor an
// error, and which counts them; past limit Reads it fails with
// errTooManyReads, so that a filler that never gives up ends too.
type countedNoProgress struct {
	reads atomic.Int64
	limit int64
}

var errTooManyReads = errors.New("the filler went on reading a source that makes no progress")

func (s *countedNoProgress) Read([]byte) (int, error) {
	if s.reads.Add(1) > s.limit {
		return 0, errTooManyReads
	}
	return 0, nil
}

func (s *countedNoProgress) Close() error { return nil }

// The filler gives up with io.ErrNoProgress after exactly maxEmptyReads
// Reads in a row that bring nothing, as bufio does, and not one Read later.
func TestFillerGivesUpAfterMaxEmptyReads(t *testing.T) {
	src := &countedNoProgress{limit: 2 * maxEmptyReads}
	tee := New(src)
	defer closeAndWait(t, tee)
	if n, err := mustReader(t, tee).Read(make([]byte, 8)); n != 0 || err != io.ErrNoProgress {
		t.Errorf("Read = %d, %v; want 0, io.ErrNoProgress", n, err)
	}
	if got := src.reads.Load(); got != maxEmptyReads {
		t.Errorf("the source was read %d times, want %d", got, maxEmptyReads)
	}
}

// The filler, waiting with the window full, is woken once the furthest
// follower has read half of it, exactly, and not before: a Read that leaves
// one byte more than half unread leaves it asleep, the next byte wakes it,
// and it reads the window full again.
func TestFillerWakesAtExactlyHalfTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &endless{}
		tee := New(src)
		defer closeAndWait(t, tee)
		r := mustReader(t, tee)
		readN(t, r, 0, 1)
		synctest.Wait() // the filler waits, the window full
		end := int(src.read.Load())
		if end < readAhead || end > 1+readAhead {
			t.Fatalf("setup: the filler read %d bytes, want the window, %d, past offset 0 or 1", end, readAhead)
		}
		front := end - readAhead/2 - 1 // one byte more than half the window unread
		readN(t, r, 1, front-1)
		synctest.Wait()
		if got := int(src.read.Load()); got != end {
			t.Fatalf("the filler read %d bytes with more than half the window unread, want none", got-end)
		}
		readN(t, r, front, 1) // half the window unread: the filler wakes
		synctest.Wait()
		if got, want := int(src.read.Load()), front+1+readAhead; got != want {
			t.Errorf("the filler is at %d once half the window was read, want %d (asleep at %d)", got, want, end)
		}
	})
}

// A size hint that proves too small, on a chunk boundary: when the probe
// finds bytes beyond it, the next chunk is sized as for a body of unknown
// length, by the bytes that have arrived (16 KiB after 16 KiB: the largest
// class no more than 4 KiB beyond them), not by the hint, which no longer
// says anything.
func TestProbeBeyondTheHintSizesByWhatArrived(t *testing.T) {
	data := randomBytes(20<<10, 27)
	budget := NewBudget(1 << 20)
	tee := New(io.NopCloser(bytes.NewReader(data)), WithBudget(budget), WithSizeHint(16<<10))
	defer closeAndWait(t, tee)
	for range 2 {
		if got, err := io.ReadAll(mustReader(t, tee)); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("follower: %d bytes, %v", len(got), err)
		}
	}
	tee.mu.Lock()
	var caps []int
	for _, c := range tee.log {
		caps = append(caps, cap(c.buf))
	}
	tee.mu.Unlock()
	want := []int{4 << 10, 8 << 10, 4 << 10, 16 << 10}
	if len(caps) != len(want) {
		t.Fatalf("chunks %v, want %v", caps, want)
	}
	for i := range want {
		if caps[i] != want[i] {
			t.Fatalf("chunks %v, want %v", caps, want)
		}
	}
	if got := budget.Peak(); got != 32<<10 {
		t.Errorf("budget peak %d, want %d: a chunk beyond the last was taken", got, 32<<10)
	}
}
