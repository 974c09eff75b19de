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

// closeAndWait closes tee and waits until everything it started is gone.
func closeAndWait(t *testing.T, tee *Tee) {
	t.Helper()
	if err := tee.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	<-tee.Done()
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
		tee := New(src)
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
		<-tee.Done()
	})
}

// Invariants 2, 4, 5 and 6: the owner's Close returns at once while the
// filler is blocked in a source Read whose Close waits for that Read (as an
// HTTP/1 server body's does). The budget is back at once but for the chunk
// the filler reads into, which stays charged until its Read returns; Done
// waits for that and for the source; the source sees no Read after Close.
func TestOwnerCloseDoesNotWaitForBlockedSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.holdClose = make(chan struct{})
		budget := NewBudget(1 << 20)
		tee := New(src, WithBudget(budget))
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
		case <-tee.Done():
			t.Fatal("Done closed while the source's Close is still blocked")
		default:
		}
		if _, err := tee.NewReader(); !errors.Is(err, ErrNotReplayable) {
			t.Errorf("NewReader after Close: err = %v, want ErrNotReplayable", err)
		}

		close(src.holdClose) // the source lets go: its Close and the pending Read return
		<-tee.Done()
		if got := budget.InUse(); got != 0 {
			t.Errorf("budget in use after Done = %d, want 0", got)
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
		tee := New(src)
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
		<-tee.Done()
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
		tee := New(src, WithLimit(0))
		r := mustReader(t, tee)
		src.feed(randomBytes(10<<10, 14))
		if _, err := r.Read(make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the filler waits for r to read the rest of its chunk
		reads, _, _ := src.stats()
		tee.Close()
		<-tee.Done()
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
		tee := New(src, WithBudget(budget))
		half := mustReader(t, tee)
		if _, err := io.ReadFull(half, make([]byte, 100<<10)); err != nil {
			t.Fatal(err)
		}
		_ = mustReader(t, tee) // never read, never closed
		tee.Close()
		<-tee.Done()
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
		tee := New(src)
		_ = mustReader(t, tee)
		tee.Close()
		<-tee.Done()
		if reads, _, closes := src.stats(); reads != 0 || closes != 1 {
			t.Errorf("source saw %d Reads and %d Closes, want 0 and 1", reads, closes)
		}
	})
}

func TestCloseTwiceIsAnError(t *testing.T) {
	tee := New(io.NopCloser(bytes.NewReader(nil)))
	if err := tee.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := tee.Close(); err == nil {
		t.Error("second Close returned nil, want an error")
	}
	<-tee.Done()
}

// WithOnDone's f runs exactly once, after Done is closed, on whichever goroutine
// lets go last: here the one that closes a source whose Close waited.
func TestWithOnDoneRunsOnceAfterDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.holdClose = make(chan struct{})
		calls := 0
		var tee *Tee
		tee = New(src, WithOnDone(func() {
			calls++
			select {
			case <-tee.Done():
			default:
				t.Error("WithOnDone's f ran before Done was closed")
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
		close(src.holdClose)
		<-tee.Done()
		synctest.Wait()
		if calls != 1 {
			t.Errorf("WithOnDone's f ran %d times, want 1", calls)
		}
	})
}
