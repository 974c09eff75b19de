package teebody

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/iotest"
	"testing/synctest"
)

// randomBytes returns n reproducible pseudo-random bytes.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// newTeeDone returns New(src, opts...) and a channel closed once everything
// the Tee started is gone: by the function it gives the Tee with WithOnDone.
// opts must not hold a WithOnDone of their own.
func newTeeDone(src io.ReadCloser, opts ...Option) (*Tee, <-chan struct{}) {
	done := make(chan struct{})
	return New(src, append(opts, WithOnDone(func() { close(done) }))...), done
}

// closeAndWait closes tee, which must be open, and waits until everything it
// started is gone: until the Tee calls the function given with WithOnDone,
// its own or, for a Tee made without one, none.
func closeAndWait(t *testing.T, tee *Tee) {
	t.Helper()
	done := make(chan struct{})
	tee.mu.Lock()
	if tee.over {
		tee.mu.Unlock()
		t.Fatal("closeAndWait: the Tee is closed already")
	}
	// The owner's reference, held until Close, keeps finish from reading
	// onDone before Close, so it may change until then.
	onDone := tee.onDone
	tee.onDone = func() {
		if onDone != nil {
			onDone()
		}
		close(done)
	}
	tee.mu.Unlock()
	if err := tee.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	<-done
}

func mustReader(t *testing.T, tee *Tee) io.ReadCloser {
	t.Helper()
	r, err := tee.NewReader()
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	return r
}

// Invariant 1: every follower yields exactly the source's bytes, then EOF,
// whether it reads alone, after another, or at the same time.
func TestFollowersYieldExactBytes(t *testing.T) {
	for _, size := range []int{0, 1, 4095, 4096, 4097, 20 << 10, 100<<10 + 3, 1 << 20} {
		data := randomBytes(size, uint64(size))
		src := &closeRecorder{Reader: bytes.NewReader(data)}
		budget := NewBudget(8 << 20)
		tee := New(src, WithBudget(budget))

		first := mustReader(t, tee)
		got, err := io.ReadAll(first)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d: first follower got %d bytes, err %v", size, len(got), err)
		}
		var wg sync.WaitGroup
		for i := range 4 {
			r := mustReader(t, tee)
			wg.Go(func() {
				got, err := io.ReadAll(r)
				if err != nil || !bytes.Equal(got, data) {
					t.Errorf("size %d: replay %d got %d bytes, err %v", size, i, len(got), err)
				}
			})
		}
		wg.Wait()
		if size > 0 && budget.InUse() == 0 {
			t.Errorf("size %d: nothing charged to the budget while the body is kept", size)
		}
		closeAndWait(t, tee)
		if got := budget.InUse(); got != 0 {
			t.Errorf("size %d: budget in use after Close = %d, want 0", size, got)
		}
		if n := src.closeCount(); n != 1 {
			t.Errorf("size %d: source closed %d times, want 1", size, n)
		}
	}
}

// A follower passes the standard reader conformance checks, alone and as a
// replay after another follower read the body.
func TestFollowerIOTest(t *testing.T) {
	for _, size := range []int{0, 1, 5000, 300 << 10} {
		data := randomBytes(size, 1)
		tee := New(io.NopCloser(bytes.NewReader(data)))
		if err := iotest.TestReader(mustReader(t, tee), data); err != nil {
			t.Errorf("size %d, first follower: %v", size, err)
		}
		if err := iotest.TestReader(mustReader(t, tee), data); err != nil {
			t.Errorf("size %d, replay: %v", size, err)
		}
		closeAndWait(t, tee)
	}
}

// Sources that return few bytes, data with EOF, or an error mid-way: every
// follower sees the same bytes, then the source's own terminal result.
func TestFollowersOfAwkwardSources(t *testing.T) {
	data := randomBytes(70<<10, 3)
	errMidway := errors.New("client went away")
	for _, tc := range []struct {
		name    string
		src     func() io.Reader
		want    []byte
		wantErr error
	}{
		{"OneByteReader", func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) }, data, nil},
		{"HalfReader", func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) }, data, nil},
		{"DataErrReader", func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) }, data, nil},
		{"TimeoutReader", func() io.Reader { return iotest.TimeoutReader(bytes.NewReader(data)) }, data[:sizeOfClass(0)], iotest.ErrTimeout},
		{"FailsMidway", func() io.Reader {
			return io.MultiReader(bytes.NewReader(data[:40000]), iotest.ErrReader(errMidway))
		}, data[:40000], errMidway},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tee := New(io.NopCloser(tc.src()))
			defer closeAndWait(t, tee)
			for i := range 3 {
				got, err := readAllEach(mustReader(t, tee), 1+i*1000)
				if !bytes.Equal(got, tc.want) {
					t.Errorf("follower %d: got %d bytes, want %d (same bytes: %v)", i, len(got), len(tc.want), bytes.HasPrefix(tc.want, got))
				}
				if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Errorf("follower %d: err = %v, want %v", i, err, tc.wantErr)
				}
			}
		})
	}
}

// readAllEach reads r to its end with reads of n bytes; it returns what it
// read and the terminal error, nil for io.EOF.
func readAllEach(r io.Reader, n int) ([]byte, error) {
	var out []byte
	buf := make([]byte, n)
	for {
		k, err := r.Read(buf)
		out = append(out, buf[:k]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// Invariant 2: a follower's Close unblocks its own pending Read, and only
// its own; the Tee's Close unblocks all of them.
func TestCloseUnblocksPendingRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		tee, done := newTeeDone(src)
		a, b := mustReader(t, tee), mustReader(t, tee)
		errs := make(chan error, 2)
		for _, r := range []io.Reader{a, b} {
			go func() {
				_, err := r.Read(make([]byte, 10))
				errs <- err
			}()
		}
		synctest.Wait()
		if len(errs) != 0 {
			t.Fatalf("a Read returned while the source had nothing: %v", <-errs)
		}
		a.Close()
		synctest.Wait()
		if len(errs) != 1 {
			t.Fatalf("follower Close did not unblock exactly its own Read: %d returned", len(errs))
		}
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Errorf("Read after follower Close: err = %v, want ErrClosed", err)
		}
		if err := tee.Close(); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if len(errs) != 1 {
			t.Fatal("Tee Close did not unblock the other pending Read")
		}
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Errorf("Read after Tee Close: err = %v, want ErrClosed", err)
		}
		<-done
	})
}

// Invariants 2, 4, 5 and 6: the owner's Close returns at once while the
// filler is blocked in a source Read whose Close waits for that Read (as an
// HTTP/1 server body's does). The budget is back at once but for the chunk
// the filler reads into, which stays charged until its Read returns; the
// function given with WithOnDone waits for that and for the source; the
// source sees no Read after Close.
func TestOwnerCloseDoesNotWaitForBlockedSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.holdClose = make(chan struct{})
		budget := NewBudget(1 << 20)
		tee, done := newTeeDone(src, WithBudget(budget))
		r := mustReader(t, tee)
		src.feed([]byte("hello"))
		buf := make([]byte, 5)
		if _, err := io.ReadFull(r, buf); err != nil {
			t.Fatal(err)
		}
		go r.Read(buf) // waits with the filler blocked in a source Read
		synctest.Wait()
		if budget.InUse() == 0 {
			t.Fatal("the kept bytes are not charged to the budget")
		}

		if err := tee.Close(); err != nil { // must not block on the source
			t.Fatal(err)
		}
		if got := budget.InUse(); got != 4<<10 {
			t.Errorf("budget in use right after Close = %d, want 4096: the filler's chunk alone", got)
		}
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("done while the source's Close is still blocked")
		default:
		}
		if _, err := tee.NewReader(); !errors.Is(err, ErrNotReplayable) {
			t.Errorf("NewReader after Close: err = %v, want ErrNotReplayable", err)
		}

		close(src.holdClose) // the source lets go: its Close and the pending Read return
		<-done
		if got := budget.InUse(); got != 0 {
			t.Errorf("budget in use once done = %d, want 0", got)
		}
		reads, after, closes := src.stats()
		if after != 0 || closes != 1 {
			t.Errorf("source: %d Reads after Close, %d Closes; want 0 and 1 (%d Reads in all)", after, closes, reads)
		}
	})
}

// Invariant 5: once Close returned, no follower reads again and the bytes a
// Read in progress brings are dropped, not delivered.
func TestNothingAfterTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.holdClose = make(chan struct{})
		tee, done := newTeeDone(src)
		r := mustReader(t, tee)
		go r.Read(make([]byte, 1))
		synctest.Wait() // the filler is inside a source Read
		tee.Close()
		src.feed([]byte("late bytes")) // the Read in progress completes
		synctest.Wait()
		if n, err := r.Read(make([]byte, 64)); n != 0 || !errors.Is(err, ErrClosed) {
			t.Errorf("Read after Close = %d, %v; want 0, ErrClosed", n, err)
		}
		close(src.holdClose)
		<-done
		reads, after, _ := src.stats()
		if reads != 1 || after != 0 {
			t.Errorf("source saw %d Reads (%d after Close), want exactly the one in progress", reads, after)
		}
		if n := held(tee); n != 0 {
			t.Errorf("%d bytes kept after the end", n)
		}
	})
}

// Invariant 5 while streaming: a filler that waits for the newest follower
// to catch up does not read the source again once the Tee is closed.
func TestNoSourceReadAfterCloseWhileStreaming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		tee, done := newTeeDone(src, WithLimit(0))
		r := mustReader(t, tee)
		src.feed(randomBytes(10<<10, 14))
		if _, err := r.Read(make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the filler waits for r to read the rest of its chunk
		reads, _, _ := src.stats()
		tee.Close()
		<-done
		if now, after, _ := src.stats(); now != reads || after != 0 {
			t.Errorf("source Reads: %d before Close, %d after it (%d started after Close)", reads, now, after)
		}
	})
}

// Invariant 4: followers abandoned without Close, mid-body or never read, do
// not hold up the release.
func TestAbandonedFollowersDoNotHoldRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data := randomBytes(200<<10, 4)
		budget := NewBudget(1 << 20)
		src := &closeRecorder{Reader: bytes.NewReader(data)}
		tee, done := newTeeDone(src, WithBudget(budget))
		half := mustReader(t, tee)
		if _, err := io.ReadFull(half, make([]byte, 100<<10)); err != nil {
			t.Fatal(err)
		}
		_ = mustReader(t, tee) // never read, never closed
		tee.Close()
		<-done
		if got := budget.InUse(); got != 0 {
			t.Errorf("budget in use = %d, want 0", got)
		}
		if src.closeCount() != 1 {
			t.Errorf("source closed %d times, want 1", src.closeCount())
		}
	})
}

// A Tee whose followers never read never starts a filler and never reads
// the source; Close still closes it.
func TestUnreadTeeNeverReadsSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		tee, done := newTeeDone(src)
		_ = mustReader(t, tee)
		tee.Close()
		<-done
		if reads, _, closes := src.stats(); reads != 0 || closes != 1 {
			t.Errorf("source saw %d Reads and %d Closes, want 0 and 1", reads, closes)
		}
	})
}

func TestCloseTwiceIsAnError(t *testing.T) {
	tee, done := newTeeDone(io.NopCloser(bytes.NewReader(nil)))
	if err := tee.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := tee.Close(); err == nil {
		t.Error("second Close returned nil, want an error")
	}
	<-done
}

// WithOnDone's f runs exactly once, once the source's Close has returned and
// no source Read is left, on whichever goroutine lets go last: here the
// filler or the one that closes a source whose Close waited.
func TestWithOnDoneRunsOnceAtTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.holdClose = make(chan struct{})
		calls := 0
		tee := New(src, WithOnDone(func() {
			calls++
			src.mu.Lock()
			defer src.mu.Unlock()
			if src.closes != 1 || src.readsNow != 0 {
				t.Errorf("WithOnDone's f ran with %d source Closes and %d Reads in progress; want 1 and 0", src.closes, src.readsNow)
			}
		}))
		r := mustReader(t, tee)
		go r.Read(make([]byte, 1)) // the filler blocks in a source Read
		synctest.Wait()
		tee.Close()
		synctest.Wait()
		if calls != 0 {
			t.Fatal("WithOnDone's f ran while the source's Close was still blocked")
		}
		close(src.holdClose) // the source's Close returns, and so does the Read
		synctest.Wait()
		if calls != 1 {
			t.Errorf("WithOnDone's f ran %d times, want 1", calls)
		}
	})
}
