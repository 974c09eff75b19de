package teebody

import (
	"io"
	"testing"
	"testing/synctest"
)

// uploaded is a Tee whose client announced and sent n bytes, all read ahead
// by the filler, of which the follower (the upstream) has read read: the
// shape of an upload whose upstream is slow.
func uploaded(t *testing.T, budget *Budget, n, read int) (*Tee, *scriptedSource, io.ReadCloser) {
	t.Helper()
	src := newScriptedSource()
	tee := New(src, WithBudget(budget), WithSizeHint(int64(n)))
	r := mustReader(t, tee)
	src.feed(bodyPrefix(n))
	readN(t, r, 0, read)
	synctest.Wait()
	return tee, src, r
}

// A chunk taken before its bytes arrive takes nothing from others: 20
// uploads each hold 256 KiB of which their upstream has read 5 KiB (a yield
// would free 4 KiB each), one more body sends 64 KiB, its upstream reads
// them, and it stalls with the budget spent. Its next chunk makes no body
// yield while no byte of it has arrived, and once 64 KiB arrive, no body
// yields either: no one body frees what that chunk takes, and 16 replays
// lost for one chunk would not pay.
func TestNoYieldBeforeArrival(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget := NewBudget(20*256<<10 + 64<<10)
		var uploads []*Tee
		for range 20 {
			tee, _, _ := uploaded(t, budget, 256<<10, 5<<10)
			defer closeAndWait(t, tee)
			uploads = append(uploads, tee)
		}
		asker, askerSrc, askerBody := stalled(t, budget, 64<<10)
		defer closeAndWait(t, asker)
		if budget.InUse() != budget.Total() {
			t.Fatalf("setup: budget in use %d of %d, want it spent", budget.InUse(), budget.Total())
		}
		if got := budget.Yields(); got != 0 {
			t.Errorf("%d bodies yielded to a chunk no byte of which has arrived, want 0", got)
		}
		if err := asker.ReplayErr(); err != nil {
			t.Errorf("the stalled body lost its replay before its bytes arrived: %v", err)
		}

		more := bodyAt(64<<10, 64<<10)
		askerSrc.feed(more)
		readN(t, askerBody, 64<<10, len(more))
		synctest.Wait()
		if got := budget.Yields(); got != 0 {
			t.Errorf("%d bodies yielded 4 KiB each for a 64 KiB chunk, want 0", got)
		}
		for i, u := range uploads {
			if err := u.ReplayErr(); err != nil {
				t.Errorf("upload %d lost its replay: %v", i, err)
			}
		}
	})
}

// Two bodies holding 1 MiB each, of which 4 KiB were read, could free 8 KiB
// together: not enough for the chunk a third body takes, so neither yields
// to it; the third loses its replay to the spent budget, and no replay is
// lost for nothing.
func TestNoYieldThatCannotPay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget := NewBudget(2<<20 + 256<<10)
		a, _, _ := uploaded(t, budget, 1<<20, 4<<10)
		defer closeAndWait(t, a)
		b, _, _ := uploaded(t, budget, 1<<20, 4<<10)
		defer closeAndWait(t, b)
		third, src, body := stalled(t, budget, 0)
		defer closeAndWait(t, third)
		for off := 0; off < 512<<10; off += 16 << 10 {
			piece := bodyAt(off, 16<<10)
			src.feed(piece)
			readN(t, body, off, len(piece))
		}
		synctest.Wait()
		if third.ReplayErr() != nil && budget.Yields() != 0 {
			t.Errorf("%d bodies yielded to a body that lost its replay anyway (%v)", budget.Yields(), third.ReplayErr())
		}
		for i, v := range []*Tee{a, b} {
			if err := v.ReplayErr(); err != nil {
				t.Errorf("body %d yielded: %v", i, err)
			}
		}
	})
}

// Before it takes anything from others, a body settles for a smaller chunk
// from what is free: with 16 KiB free and a body that could yield 1 MiB,
// a body that asks for a 64 KiB chunk takes 16 KiB and nobody yields.
func TestSmallerChunkBeforeReclaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget := NewBudget(1<<20 + 64<<10 + 16<<10)
		big, _, _ := uploaded(t, budget, 1<<20, 1<<20)
		defer closeAndWait(t, big)
		asker, src, body := stalled(t, budget, 64<<10)
		defer closeAndWait(t, asker)
		piece := bodyAt(64<<10, 16<<10)
		src.feed(piece)
		readN(t, body, 64<<10, len(piece))
		synctest.Wait()
		if got := budget.Yields(); got != 0 {
			t.Errorf("%d bodies yielded while 16 KiB were free for a smaller chunk", got)
		}
		if err := asker.ReplayErr(); err != nil {
			t.Errorf("the asking body lost its replay: %v", err)
		}
		if err := big.ReplayErr(); err != nil {
			t.Errorf("the big body yielded: %v", err)
		}
	})
}

// A body makes at most one other yield in its life: once another body has
// taken what a yield freed for it, it streams on rather than make a second
// body yield, so a write costs at most one replay besides its own.
func TestOneYieldPerBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget := NewBudget(2 << 20)
		a, _, _ := uploaded(t, budget, 1<<20, 1<<20)
		defer closeAndWait(t, a)
		b, _, _ := uploaded(t, budget, 1<<20, 1<<20)
		defer closeAndWait(t, b)

		src := newScriptedSource()
		asker := New(src, WithBudget(budget), WithSizeHint(512<<10))
		defer closeAndWait(t, asker)
		body := mustReader(t, asker)
		src.feed(bodyPrefix(1))
		readN(t, body, 0, 1)
		synctest.Wait()
		if got := budget.Yields(); got != 1 {
			t.Fatalf("setup: %d yields for the asking body's first byte, want 1", got)
		}
		// Another body takes all that yield freed.
		free := int(budget.Total() - budget.InUse())
		other, _, _ := uploaded(t, budget, free, free)
		defer closeAndWait(t, other)
		if budget.InUse() != budget.Total() || budget.Yields() != 1 {
			t.Fatalf("setup: budget in use %d of %d, %d yields", budget.InUse(), budget.Total(), budget.Yields())
		}

		more := bodyAt(1, 64<<10)
		src.feed(more)
		readN(t, body, 1, len(more))
		synctest.Wait()
		if got := budget.Yields(); got != 1 {
			t.Errorf("%d yields, want 1: the asking body made a second body yield", got)
		}
		wantReason(t, asker.ReplayErr(), ReasonNoBudget)
	})
}
