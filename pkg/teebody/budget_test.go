package teebody

import (
	"bytes"
	"io"
	"testing"
	"testing/synctest"
)

// kept is a Tee on budget whose source sent n bytes and io.EOF, all read by
// its one follower: a replayable body that holds its n bytes, full chunks
// that a yield would free.
func kept(t *testing.T, budget *Budget, n int) *Tee {
	t.Helper()
	src := newScriptedSource()
	tee := New(src, WithBudget(budget))
	src.feed(bodyPrefix(n))
	src.end(io.EOF)
	r := mustReader(t, tee)
	readN(t, r, 0, n)
	if _, err := r.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("after %d bytes: %v, want io.EOF", n, err)
	}
	return tee
}

// readAheadOf is a Tee on budget whose source sent n bytes and io.EOF, of
// which its follower read only read: it holds n bytes, and a yield would free
// only the full chunks in the first read.
func readAheadOf(t *testing.T, budget *Budget, n, read int) *Tee {
	t.Helper()
	src := newScriptedSource()
	tee := New(src, WithBudget(budget))
	src.feed(bodyPrefix(n))
	src.end(io.EOF)
	readN(t, mustReader(t, tee), 0, read)
	synctest.Wait()
	return tee
}

// waiting is a Tee on budget whose one follower waits in a Read for the
// first byte: its filler has taken its first chunk (charged if the budget
// had room, else not) and waits in a source Read. The Read's result comes on
// the channel.
func waiting(t *testing.T, budget *Budget) (*Tee, *scriptedSource, <-chan []byte) {
	t.Helper()
	src := newScriptedSource()
	tee := New(src, WithBudget(budget))
	r := mustReader(t, tee)
	got := make(chan []byte, 1)
	go func() {
		buf := make([]byte, 64)
		n, _ := r.Read(buf)
		got <- buf[:n]
	}()
	synctest.Wait()
	return tee, src, got
}

// A chunk whose bytes arrive when the budget has exactly its size free is
// charged, and nobody yields for it: the asking body keeps its replay, and so
// does the body that could have yielded.
func TestChunkThatExactlyFillsTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The holder holds 12 KiB, of which its follower has finished 4 KiB:
		// it holds more than the asker will, so it would yield if asked.
		budget := NewBudget(12<<10 + 4<<10)
		holder := readAheadOf(t, budget, 12<<10, 4<<10)
		defer closeAndWait(t, holder)
		other, _, _ := waiting(t, budget) // holds its first chunk, 4 KiB, until closed
		if budget.InUse() != budget.Total() {
			t.Fatalf("setup: budget in use %d of %d", budget.InUse(), budget.Total())
		}
		asker, askerSrc, first := waiting(t, budget) // its chunk, uncharged, waits for bytes
		defer closeAndWait(t, asker)
		closeAndWait(t, other) // 4 KiB free: exactly the asker's chunk
		if got := budget.Total() - budget.InUse(); got != 4<<10 {
			t.Fatalf("setup: %d bytes free, want 4096", got)
		}
		askerSrc.feed(bodyPrefix(1))
		if got := <-first; !bytes.Equal(got, bodyPrefix(1)) {
			t.Fatalf("the asking body's first Read: %v", got)
		}
		if err := asker.ReplayErr(); err != nil {
			t.Errorf("the asking body lost its replay for a chunk that fits exactly: %v", err)
		}
		if err := holder.ReplayErr(); err != nil {
			t.Errorf("a body yielded for a chunk that fits: %v", err)
		}
		if got := budget.Yields(); got != 0 {
			t.Errorf("yields = %d, want 0", got)
		}
		if got := budget.InUse(); got != budget.Total() {
			t.Errorf("budget in use %d, want all %d: the asker's chunk charged", got, budget.Total())
		}
	})
}

// A body whose yield frees exactly what the asking body needs yields: the
// asker takes its chunk and keeps its replay, and the holder drops exactly
// the chunk its follower finished.
func TestYieldOfExactlyWhatIsNeeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget, holder, asker := askBehindHolder(t, false)
		if err := asker.ReplayErr(); err != nil {
			t.Errorf("the asking body lost its replay: %v", err)
		}
		wantReason(t, holder.ReplayErr(), ReasonYielded)
		if got := budget.Yields(); got != 1 {
			t.Errorf("yields = %d, want 1", got)
		}
		if got := held(holder); got != 4<<10 {
			t.Errorf("the holder holds %d bytes after its yield, want 4096: the finished chunk dropped", got)
		}
		if got := held(asker); got != 4<<10 || budget.InUse() != budget.Total() {
			t.Errorf("the asker holds %d bytes, budget in use %d of %d; want its 4096-byte chunk, all in use",
				got, budget.InUse(), budget.Total())
		}
	})
}

// askBehindHolder is a budget of 8 KiB, all of it held by the holder, a Tee
// whose follower has finished its first 4 KiB chunk (a yield frees exactly
// that), and the asker, a Tee on it whose follower has read its first byte:
// it needed a 4 KiB chunk when the budget had no room. If askNoYield, the
// asker asked no yield (AskNoYield). Both are closed when the test ends.
func askBehindHolder(t *testing.T, askNoYield bool) (budget *Budget, holder, asker *Tee) {
	t.Helper()
	budget = NewBudget(8 << 10)
	holder = readAheadOf(t, budget, 8<<10, 4<<10)
	t.Cleanup(func() { closeAndWait(t, holder) })
	if budget.InUse() != budget.Total() {
		t.Fatalf("setup: budget in use %d of %d", budget.InUse(), budget.Total())
	}
	asker, askerSrc, askerBody := stalled(t, budget, 0)
	t.Cleanup(func() { closeAndWait(t, asker) })
	if askNoYield {
		asker.AskNoYield()
	}
	askerSrc.feed(bodyPrefix(1))
	readN(t, askerBody, 0, 1)
	return budget, holder, asker
}

// A reclaim looks at no more than maxReclaimTries bodies: with more bodies
// that could yield but hold too little (as much as the asking body would
// then hold), it passes over maxReclaimTries of them, puts them back among
// the bodies that can yield, and the asking body streams.
func TestReclaimPassesOverAtMostMaxTries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const holders = maxReclaimTries + 2
		budget := NewBudget(holders * 4 << 10)
		var held []*Tee
		for range holders {
			tee := kept(t, budget, 4<<10)
			defer closeAndWait(t, tee)
			held = append(held, tee)
		}
		if budget.InUse() != budget.Total() {
			t.Fatalf("setup: budget in use %d of %d", budget.InUse(), budget.Total())
		}
		asker, askerSrc, askerBody := stalled(t, budget, 0)
		defer closeAndWait(t, asker)
		askerSrc.feed(bodyPrefix(1))
		readN(t, askerBody, 0, 1)
		wantReason(t, asker.ReplayErr(), ReasonNoBudget)
		if got := budget.Yields(); got != 0 {
			t.Errorf("yields = %d, want 0", got)
		}
		for i, tee := range held {
			if err := tee.ReplayErr(); err != nil {
				t.Errorf("holder %d yielded: %v", i, err)
			}
			checkYieldKey(t, tee, budget) // still among the bodies that can yield
		}
		budget.mu.Lock()
		inHeap := len(budget.yieldable)
		budget.mu.Unlock()
		if inHeap != holders {
			t.Errorf("%d bodies can yield after the reclaim, want all %d", inHeap, holders)
		}
	})
}

// A body without a size hint makes another yield only if the yield covers
// all it will then hold (what it holds plus the chunk), so that it can grow
// to twice that before it needs more; a yield of just the chunk is refused.
func TestYieldCoversAllTheAskerWillHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The holder holds 28 KiB, of which its follower has finished one
		// 4 KiB chunk: a yield would free 4 KiB.
		budget := NewBudget(28<<10 + 4<<10)
		holder := readAheadOf(t, budget, 28<<10, 4<<10)
		defer closeAndWait(t, holder)
		// The asker holds 4 KiB, read, and asks for its second chunk, 4 KiB
		// (its limit leaves no room for more): it would then hold 8 KiB,
		// twice what a yield would free.
		askerSrc := newScriptedSource()
		asker := New(askerSrc, WithBudget(budget), WithLimit(8<<10))
		defer closeAndWait(t, asker)
		askerBody := mustReader(t, asker)
		askerSrc.feed(bodyPrefix(4 << 10))
		readN(t, askerBody, 0, 4<<10)
		synctest.Wait()
		if budget.InUse() != budget.Total() {
			t.Fatalf("setup: budget in use %d of %d", budget.InUse(), budget.Total())
		}
		askerSrc.feed(bodyAt(4<<10, 1))
		readN(t, askerBody, 4<<10, 1)
		wantReason(t, asker.ReplayErr(), ReasonNoBudget)
		if err := holder.ReplayErr(); err != nil {
			t.Errorf("the holder yielded 4 KiB to a body that would hold 8 KiB: %v", err)
		}
		if got := budget.Yields(); got != 0 {
			t.Errorf("yields = %d, want 0", got)
		}
	})
}

// A body that announced its length, exactly its limit, makes another yield
// when the yield covers the rest of it (the hint less what has arrived): the
// rest fits, so its replay is kept to the end. (A body that announced more
// than its limit makes nobody yield: TestAnnouncedTooLargeTakesNothingBack.)
func TestYieldCoversTheRestOfAnAnnouncedBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget := NewBudget(12<<10 + 4<<10)
		holder := readAheadOf(t, budget, 12<<10, 4<<10) // a yield frees 4 KiB
		defer closeAndWait(t, holder)
		// The asker announced 8 KiB, sent the first 4 KiB, read: the rest
		// is 4 KiB, one chunk.
		src := newScriptedSource()
		asker := New(src, WithBudget(budget), WithSizeHint(8<<10), WithLimit(8<<10))
		defer closeAndWait(t, asker)
		body := mustReader(t, asker)
		src.feed(bodyPrefix(4 << 10))
		readN(t, body, 0, 4<<10)
		synctest.Wait()
		if budget.InUse() != budget.Total() {
			t.Fatalf("setup: budget in use %d of %d", budget.InUse(), budget.Total())
		}
		src.feed(bodyAt(4<<10, 4<<10))
		src.end(io.EOF)
		readN(t, body, 4<<10, 4<<10)
		if err := asker.ReplayErr(); err != nil {
			t.Errorf("the announced body lost its replay: %v", err)
		}
		wantReason(t, holder.ReplayErr(), ReasonYielded)
		if got := budget.Yields(); got != 1 {
			t.Errorf("yields = %d, want 1", got)
		}
		if r, err := asker.NewReader(); err != nil {
			t.Errorf("replay of the announced body: %v", err)
		} else {
			readN(t, r, 0, 8<<10)
		}
	})
}
