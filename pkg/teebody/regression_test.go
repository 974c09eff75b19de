package teebody

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
	"testing/synctest"
)

// A Read that brings nothing into a new chunk gives the chunk back to the
// pool; the filler must not touch it afterwards. (It once still set c.buf's
// length: another Tee's filler that got the chunk from the pool in the
// meantime raced with that write and could lose its chunk's length.) The
// common case is a body that ends exactly at a chunk boundary (4096 bytes
// here): the filler takes a fresh chunk for the next Read, which returns
// (0, io.EOF).
//
// Every chunk given back goes, through testHookPut, to a goroutine that
// plays that other Tee's filler: it writes the chunk as soon as it has it,
// synchronised with the give-back only, as a Get from the pool would be.
// The race detector then reports any access of the filler after the
// give-back, on every run (the pool itself would drop a Put at random under
// the race detector, and the chunk would never reach the other goroutine).
func TestEmptyReadAtChunkBoundaryLeavesPooledChunkAlone(t *testing.T) {
	if !raceEnabled {
		t.Skip("needs the race detector")
	}
	given := make(chan *chunk, 16) // more than the Tee below gives back
	hook := func(c *chunk) {
		select {
		case given <- c:
		default: // not the Tee below: a full channel must not block it
		}
	}
	testHookPut.Store(&hook)
	defer testHookPut.Store(nil)
	taken := make(chan []*chunk)
	go func() { // plays another Tee's filler taking each chunk from the pool
		var got []*chunk
		for c := range given {
			if c == nil { // the test's end: every chunk before it is taken
				taken <- got
				return
			}
			c.buf = c.buf[:0] // as newChunkLocked's caller would, before reading into it
			got = append(got, c)
		}
	}()

	tee := New(io.NopCloser(bytes.NewReader(make([]byte, 4096))))
	var last *chunk // the chunk of the filler's latest Read; the filler's own
	tee.testHookUnlocked = func() { last = tee.filling }
	if b, err := io.ReadAll(mustReader(t, tee)); err != nil || len(b) != 4096 {
		t.Fatalf("ReadAll: %d bytes, %v", len(b), err)
	}
	closeAndWait(t, tee) // every chunk is given back by now, and the filler has exited
	testHookPut.Store(nil)
	given <- nil
	got := <-taken
	if last == nil || len(got) == 0 || !slices.Contains(got, last) {
		// The case under test is gone: the read that found io.EOF went into
		// no fresh chunk, or that chunk was never given back.
		t.Fatalf("the chunk of the filler's last Read (%p) was not given back (given back: %v)", last, got)
	}
}

// Once replays are refused (Seal), the filler reads on only when the newest
// follower has caught up. An older follower that is ahead of it then waits for
// the newest, not for the source: here the source has already ended (io.EOF
// is queued); the older follower must not wait for the newest, which may be
// abandoned (docs/design.md, fact 2), but learn at once that it cannot go on.
func TestOlderFollowerDoesNotWaitForNewestAfterSeal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		tee := New(src)
		older := mustReader(t, tee)
		_ = mustReader(t, tee) // newest: never read, never closed
		src.feed([]byte("hello"))
		if _, err := io.ReadFull(older, make([]byte, 5)); err != nil {
			t.Fatal(err)
		}
		tee.Seal()
		src.feed([]byte("world")) // the filler's pending Read brings these, then it waits for the newest
		synctest.Wait()
		src.end(io.EOF)
		if _, err := io.ReadFull(older, make([]byte, 5)); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := older.Read(make([]byte, 10))
			done <- err
		}()
		synctest.Wait()
		select {
		case err := <-done:
			if err != io.EOF && !errors.Is(err, ErrNotReplayable) {
				t.Errorf("older follower: err = %v, want io.EOF or ErrNotReplayable", err)
			}
		default:
			t.Error("older follower's Read blocked although the source has ended: the filler waits for the unread newest follower")
			closeAndWait(t, tee)
			<-done
			return
		}
		closeAndWait(t, tee)
	})
}
