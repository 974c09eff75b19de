package teebody

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"testing/synctest"
)

// endless is a source that has every byte ready at once, as a fast client
// does, and counts what was read of it.
type endless struct{ read atomic.Int64 }

func (e *endless) Read(p []byte) (int, error) {
	off := int(e.read.Load())
	for i := range p {
		p[i] = bodyByte(off + i)
	}
	e.read.Add(int64(len(p)))
	return len(p), nil
}

func (e *endless) Close() error { return nil }

// readN reads exactly n bytes from r and checks that they are the body's
// bytes at offset off.
func readN(t *testing.T, r io.Reader, off, n int) {
	t.Helper()
	got := make([]byte, n)
	if _, err := io.ReadFull(r, got); err != nil {
		t.Fatalf("read %d bytes at %d: %v", n, off, err)
	}
	for i, b := range got {
		if b != bodyByte(off+i) {
			t.Fatalf("byte at offset %d is %d, want %d", off+i, b, bodyByte(off+i))
		}
	}
}

// The filler reads no further than readAhead past the furthest follower, so
// an upstream that reads slowly slows the client down (as through a plain
// proxy) instead of making the Tee hold the whole body, and takes no chunk
// that reaches further than that; it wakes up only
// once half the window is free; and a replay catching up reads from the log
// without the filler.
func TestFillerStaysWithinReadAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &endless{}
		budget := NewBudget(64 << 20)
		tee := New(src, WithBudget(budget))
		defer closeAndWait(t, tee)
		first := mustReader(t, tee)

		readN(t, first, 0, 1<<10)
		synctest.Wait()
		if got := src.read.Load(); got > 1<<10+readAhead {
			t.Fatalf("filler read %d bytes with 1 KiB read by the follower, want <= %d", got, 1<<10+readAhead)
		}
		if got := src.read.Load(); got < readAhead {
			t.Fatalf("filler read only %d bytes ahead, want readAhead (%d)", got, readAhead)
		}
		// No chunk reaches past the window: what is held is what the
		// follower took, the window, and at most one smallest chunk.
		if got, most := budget.InUse(), int64(1<<10+readAhead+minChunk); got > most {
			t.Errorf("budget in use %d, want at most %d", got, most)
		}

		// Less than half the window read: the filler sleeps on.
		before := src.read.Load()
		readN(t, first, 1<<10, readAhead/4)
		synctest.Wait()
		if got := src.read.Load(); got != before {
			t.Errorf("filler read %d bytes after a quarter of the window was read, want none", got-before)
		}
		// Past half of it: the filler reads on, to readAhead again.
		front := 1<<10 + readAhead/4 + readAhead/2
		readN(t, first, 1<<10+readAhead/4, readAhead/2)
		synctest.Wait()
		if got := src.read.Load(); got != int64(front+readAhead) {
			t.Errorf("filler at %d, want %d: readAhead past the follower", got, front+readAhead)
		}

		// A replay reads what is kept; the filler moves only once the
		// replay passes the furthest follower's offset.
		before = src.read.Load()
		replay := mustReader(t, tee)
		readN(t, replay, 0, front)
		synctest.Wait()
		if got := src.read.Load(); got != before {
			t.Errorf("filler read %d bytes while a replay caught up, want none", got-before)
		}
		readN(t, replay, front, readAhead)
		synctest.Wait()
		if got, want := src.read.Load(), int64(front+2*readAhead); got != want {
			t.Errorf("filler at %d once the replay passed the front, want %d", got, want)
		}
	})
}

// Once replays are refused, the filler reads only when the newest follower
// has read everything: one chunk of at most maxStreamChunk ahead.
func TestStreamingFillerWaitsForNewest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &endless{}
		tee := New(src, WithLimit(0))
		defer closeAndWait(t, tee)
		r := mustReader(t, tee)
		readN(t, r, 0, 100)
		synctest.Wait()
		if got := src.read.Load(); got > maxStreamChunk {
			t.Errorf("a streaming filler read %d bytes ahead, want at most %d", got, maxStreamChunk)
		}
	})
}

// A body holds budget for what has arrived, not for what it announced: a
// client that announces 50 MiB and sends 1 KiB holds one small chunk, and the
// chunks grow as fast as bytes arrive, each at most the bytes already in.
func TestChargeForWhatArrived(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		budget := NewBudget(64 << 20)
		tee := New(src, WithBudget(budget), WithSizeHint(50<<20))
		defer closeAndWait(t, tee)
		r := mustReader(t, tee)

		src.feed(bodyPrefix(1 << 10))
		readN(t, r, 0, 1<<10)
		synctest.Wait()
		if got := budget.InUse(); got > 8<<10 {
			t.Errorf("announced 50 MiB, sent 1 KiB: %d bytes charged, want at most 8 KiB", got)
		}

		// Then the bytes come fast: the charge stays within twice what
		// arrived, plus the smallest chunk.
		arrived := 1 << 10
		for arrived < 4<<20 {
			piece := bodyAt(arrived, 64<<10)
			src.feed(piece)
			readN(t, r, arrived, len(piece))
			arrived += len(piece)
			synctest.Wait()
			if got, most := budget.InUse(), int64(2*arrived+sizeOfClass(0)); got > most {
				t.Fatalf("%d bytes arrived: %d charged, want at most %d", arrived, got, most)
			}
		}
		tee.mu.Lock()
		chunks := len(tee.log)
		tee.mu.Unlock()
		if chunks > 20 {
			t.Errorf("4 MiB kept in %d chunks: the chunks do not grow", chunks)
		}
	})
}

// stalled is a Tee whose client sent n bytes and stalls, with the upstream
// having read them all: the shape of an upload that sits on its budget.
func stalled(t *testing.T, budget *Budget, n int) (*Tee, *scriptedSource, io.ReadCloser) {
	t.Helper()
	src := newScriptedSource()
	tee := New(src, WithBudget(budget))
	r := mustReader(t, tee)
	src.feed(bodyPrefix(n))
	readN(t, r, 0, n)
	synctest.Wait()
	return tee, src, r
}

// When the budget is spent, the body whose yield frees the most yields to a
// smaller one: it drops what its follower has read, loses its replay
// (ReasonYielded), and streams on, byte-exact; the smaller body keeps its
// replay; the budget never goes over its total.
func TestBiggestYields(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// big holds chunks of 4 KiB to 512 KiB (1020 KiB) and mid chunks of 4
		// to 64 KiB (124 KiB): the whole budget.
		budget := NewBudget(1<<20 + 120<<10)
		big, bigSrc, bigBody := stalled(t, budget, 700<<10)
		defer closeAndWait(t, big)
		mid, _, _ := stalled(t, budget, 100<<10)
		defer closeAndWait(t, mid)
		if budget.InUse() < budget.Total()-200<<10 {
			t.Fatalf("setup: budget in use %d of %d, want it nearly spent", budget.InUse(), budget.Total())
		}

		small, smallSrc, _ := stalled(t, budget, 0)
		defer closeAndWait(t, small)
		smallSrc.feed(bodyPrefix(300 << 10))
		smallSrc.end(io.EOF)
		if got, err := io.ReadAll(mustReader(t, small)); err != nil || !bytes.Equal(got, bodyPrefix(300<<10)) {
			t.Fatalf("small body: %d bytes, %v", len(got), err)
		}
		if err := small.ReplayErr(); err != nil {
			t.Errorf("the small body lost its replay: %v", err)
		}
		wantReason(t, big.ReplayErr(), ReasonYielded)
		if err := mid.ReplayErr(); err != nil {
			t.Errorf("the middle body yielded too (%v): one yield was enough", err)
		}
		if got := budget.Yields(); got != 1 {
			t.Errorf("yields = %d, want 1", got)
		}
		if got := budget.Peak(); got > budget.Total() {
			t.Errorf("budget peak %d over its total %d", got, budget.Total())
		}

		// The body that yielded streams on to its follower, exactly.
		more := bodyAt(700<<10, 200<<10)
		bigSrc.feed(more)
		readN(t, bigBody, 700<<10, len(more))
		if _, err := big.NewReader(); err == nil {
			t.Error("a replay of the body that yielded was handed out")
		}
	})
}

// A body never yields to one that would then hold more than it did, so two
// bodies cannot take budget back and forth: the asking body streams instead
// and loses its replay (ReasonNoBudget).
func TestNoYieldToABiggerBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Each holds chunks of 4, 8, 16 and 32 KiB, the last with 4 KiB in.
		budget := NewBudget(120 << 10)
		a, _, _ := stalled(t, budget, 32<<10)
		defer closeAndWait(t, a)
		b, bSrc, bBody := stalled(t, budget, 32<<10)
		defer closeAndWait(t, b)
		if budget.InUse() != budget.Total() {
			t.Fatalf("setup: budget in use %d of %d", budget.InUse(), budget.Total())
		}
		// b, holding as much as a, fills its chunk and asks for another: a
		// keeps its budget.
		more := bodyAt(32<<10, 32<<10)
		bSrc.feed(more)
		readN(t, bBody, 32<<10, len(more))
		wantReason(t, b.ReplayErr(), ReasonNoBudget)
		if err := a.ReplayErr(); err != nil {
			t.Errorf("a yielded to a body that then holds more: %v", err)
		}
		if got := budget.Yields(); got != 0 {
			t.Errorf("yields = %d, want 0", got)
		}
	})
}

// Many bodies on a small budget, all alive at once, read, replayed, sealed
// and closed from several goroutines, so that yields race Close, Seal, new
// followers and pending source Reads for real (the race detector watches,
// and a cycle of lock waits would hang the test until go test's -timeout
// shows it): every follower yields exact bytes or a clean error, the budget
// never goes over its total, and all of it comes back.
func TestYieldsUnderConcurrency(t *testing.T) {
	const bodies = 64
	budget := NewBudget(124 << 10)
	rng := rand.New(rand.NewPCG(16, 8))
	// A body that holds the whole budget (chunks of 4 to 64 KiB), its
	// upstream having read 112 KiB of it, so that at least one of the others takes what it frees: a yield
	// happens on every run, whatever the interleaving.
	bigSrc, bigW := io.Pipe()
	big, bigDone := newTeeDone(bigSrc, WithBudget(budget))
	go bigW.Write(randomBytes(112<<10, 99))
	if _, err := io.ReadFull(mustReader(t, big), make([]byte, 112<<10)); err != nil {
		t.Fatal(err)
	}
	if budget.InUse() != budget.Total() {
		t.Fatalf("setup: budget in use %d of %d", budget.InUse(), budget.Total())
	}
	var (
		wg, started sync.WaitGroup
		allStarted  = make(chan struct{})
	)
	started.Add(bodies)
	for i := range bodies {
		size := 1<<10 + rng.IntN(96<<10)
		hint := int64(size * rng.IntN(2)) // half of them announce their size
		data := randomBytes(size, uint64(i))
		race := rng.IntN(3) // what the first read races: 0 Close, 1 a replay, 2 Seal
		wg.Go(func() {
			tee, done := newTeeDone(io.NopCloser(iotest.HalfReader(bytes.NewReader(data))), WithBudget(budget), WithSizeHint(hint))
			var readers sync.WaitGroup
			read := func() {
				r, err := tee.NewReader()
				if err != nil {
					if !errors.Is(err, ErrNotReplayable) {
						t.Errorf("NewReader: %v", err)
					}
					return
				}
				readers.Go(func() {
					defer r.Close()
					got, err := io.ReadAll(r)
					if !bytes.Equal(got, data[:len(got)]) {
						t.Errorf("body %d: bytes differ in the first %d", i, len(got))
					}
					if err != nil && !errors.Is(err, ErrNotReplayable) && !errors.Is(err, ErrClosed) {
						t.Errorf("body %d: %v", i, err)
					}
					if err == nil && len(got) != len(data) {
						t.Errorf("body %d: %d of %d bytes and no error", i, len(got), len(data))
					}
				})
			}
			started.Done()
			<-allStarted
			read()
			switch race {
			case 0:
				tee.Close()
			case 1:
				read()
			case 2:
				tee.Seal()
			}
			readers.Wait()
			read()
			readers.Wait()
			if race != 0 {
				tee.Close()
			}
			<-done
			if got := budget.InUse(); got > budget.Total() {
				t.Errorf("budget in use %d over its total %d", got, budget.Total())
			}
		})
	}
	started.Wait()
	close(allStarted)
	wg.Wait()
	wantReason(t, big.ReplayErr(), ReasonYielded)
	big.Close()
	bigW.Close()
	<-bigDone
	if got := budget.InUse(); got != 0 {
		t.Errorf("budget in use at the end = %d, want 0", got)
	}
	if budget.Yields() == 0 {
		t.Error("no body yielded: the test did not exercise yields")
	}
	t.Logf("%d yields, peak %d of %d", budget.Yields(), budget.Peak(), budget.Total())
}

// A body whose newest follower has not finished a chunk has nothing to give:
// it keeps its replay, and the body that asked streams instead.
func TestNothingToGiveNoYield(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget := NewBudget(1<<20 + 4<<10) // what big holds once it read readAhead past one byte: chunks of 4 KiB to 512 KiB, then two of 4 KiB up to the window
		src := newScriptedSource()
		big := New(src, WithBudget(budget))
		defer closeAndWait(t, big)
		// The upstream took one byte, then the client sent on and the
		// filler read ahead. (With every byte ready from the start, the
		// filler could stop at readAhead past offset 0 before the follower
		// had moved the front.)
		src.feed(bodyPrefix(1))
		readN(t, mustReader(t, big), 0, 1)
		src.feed(bodyAt(1, 2<<20))
		synctest.Wait()
		if budget.InUse() != budget.Total() {
			t.Fatalf("setup: budget in use %d of %d", budget.InUse(), budget.Total())
		}
		small, smallSrc, _ := stalled(t, budget, 0)
		defer closeAndWait(t, small)
		smallSrc.feed(bodyPrefix(1 << 10))
		smallSrc.end(io.EOF)
		if got, err := io.ReadAll(mustReader(t, small)); err != nil || !bytes.Equal(got, bodyPrefix(1<<10)) {
			t.Fatalf("small body: %d bytes, %v", len(got), err)
		}
		wantReason(t, small.ReplayErr(), ReasonNoBudget)
		if err := big.ReplayErr(); err != nil {
			t.Errorf("a body with nothing read yielded: %v", err)
		}
		if got := budget.Yields(); got != 0 {
			t.Errorf("yields = %d, want 0", got)
		}
	})
}

// Bodies of one size do not take budget from each other in turn: a body
// that would then hold as much as the one holding it streams instead, so the
// first keeps its replay.
func TestEqualBodiesDoNotTradeBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget := NewBudget(4 << 10)
		a, _, _ := stalled(t, budget, 4<<10) // its one chunk, full and read
		defer closeAndWait(t, a)
		b, bSrc, bBody := stalled(t, budget, 0)
		defer closeAndWait(t, b)
		bSrc.feed(bodyPrefix(1))
		readN(t, bBody, 0, 1) // b asks for a 4 KiB chunk
		wantReason(t, b.ReplayErr(), ReasonNoBudget)
		if err := a.ReplayErr(); err != nil {
			t.Errorf("a yielded to a body that then holds as much: %v", err)
		}
	})
}
