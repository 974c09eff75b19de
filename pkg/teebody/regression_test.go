package teebody

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/synctest"
)

// eofSignal is a source that, when it is about to return io.EOF, first
// signals sig (once).
type eofSignal struct {
	r   io.Reader
	sig chan struct{}
}

func (s *eofSignal) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err == io.EOF {
		select {
		case s.sig <- struct{}{}:
		default:
		}
	}
	return n, err
}

func (s *eofSignal) Close() error { return nil }

// A Read that brings nothing into a new chunk gives the chunk back to the
// pool; the filler must not touch it afterwards. (It once still set c.buf's
// length: another Tee's filler that got the chunk from the pool in the
// meantime raced with that write and could lose its chunk's length.) The
// common case is a body that ends exactly at a chunk boundary (4096 bytes
// here).
//
// Run with -race: the detector reports the write after Put against the
// access of the goroutine that got the chunk from the pool.
func TestEmptyReadAtChunkBoundaryLeavesPooledChunkAlone(t *testing.T) {
	if !raceEnabled {
		t.Skip("needs the race detector")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one P: a Put is visible to the next Get
	class := classFilledBy(4096)                    // the chunk the filler takes after a full 4 KiB one
	for attempt := 0; attempt < 20; attempt++ {
		for chunkPools[class].Get() != nil { // drain
		}
		sig := make(chan struct{}, 1)
		got := make(chan bool)
		go func() { // plays another Tee's filler taking a chunk from the pool
			<-sig // the source is about to return (0, io.EOF); no sync with the filler after that
			for range 1000 {
				if c, ok := chunkPools[class].Get().(*chunk); ok {
					c.buf = c.buf[:0] // as newChunkLocked's caller would, before reading into it
					got <- true
					return
				}
				runtime.Gosched()
			}
			got <- false // the race detector's Pool dropped the Put; try again
		}()
		tee := New(&eofSignal{r: bytes.NewReader(make([]byte, 4096)), sig: sig})
		if b, err := io.ReadAll(mustReader(t, tee)); err != nil || len(b) != 4096 {
			t.Fatalf("ReadAll: %d bytes, %v", len(b), err)
		}
		ok := <-got
		closeAndWait(t, tee)
		if ok {
			return // the race, if any, has been reported by now
		}
	}
	// Each attempt misses only if the race detector's Pool dropped the Put
	// (one in four): twenty misses mean the test no longer sets up the race.
	t.Fatal("the pool never handed the chunk back in 20 attempts: the test does not reach the race")
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
