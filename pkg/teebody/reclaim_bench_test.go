package teebody

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// BenchmarkReclaim measures one chunk request of a body (its chunk taken,
// one byte arriving into it, the request over) when the budget is spent by
// holders bodies that cannot yield: each holds two full 4 KiB chunks that its
// follower has not finished. The request must fail without making anyone
// yield (a holder holds more than the asking body would, so only its having
// nothing to give keeps it from yielding), and its cost must not grow with
// the holders ("free" is the same request with budget to spare, the
// baseline).
func BenchmarkReclaim(b *testing.B) {
	for _, holders := range []int{200, 2000, 20000} {
		b.Run(fmt.Sprintf("holders=%d/spent", holders), func(b *testing.B) {
			benchmarkChunkRequest(b, holders, 0)
		})
		b.Run(fmt.Sprintf("holders=%d/free", holders), func(b *testing.B) {
			benchmarkChunkRequest(b, holders, 64<<10)
		})
	}
}

func benchmarkChunkRequest(b *testing.B, holders int, spare int64) {
	budget := NewBudget(int64(holders)*8<<10 + spare)
	tees := make([]*Tee, holders)
	for i := range tees {
		tees[i] = holdUnfinished(budget)
	}
	if spare == 0 && budget.InUse() != budget.Total() {
		b.Fatalf("setup: budget in use %d of %d", budget.InUse(), budget.Total())
	}
	b.ReportAllocs()
	for b.Loop() {
		asker := New(io.NopCloser(strings.NewReader("")), WithBudget(budget))
		asker.NewReader()
		asker.mu.Lock()
		c, buf := asker.nextBufferLocked()
		asker.publishLocked(c, buf[:1])
		asker.mu.Unlock()
		asker.endAndClose()
	}
	b.StopTimer()
	if spare == 0 && budget.Yields() != 0 {
		b.Fatalf("%d bodies yielded with nothing to give", budget.Yields())
	}
	for _, tee := range tees {
		tee.endAndClose()
	}
	if budget.InUse() != 0 {
		b.Fatalf("budget in use %d at the end", budget.InUse())
	}
}

// holdUnfinished returns a Tee on budget that holds two full 4 KiB chunks,
// which its follower has not read: a body that cannot yield. No filler runs:
// the chunks are filled as the filler would fill them.
func holdUnfinished(budget *Budget) *Tee {
	tee := New(io.NopCloser(strings.NewReader("")), WithBudget(budget))
	tee.NewReader()
	tee.mu.Lock()
	for range 2 {
		c, buf := tee.nextBufferLocked()
		tee.publishLocked(c, buf)
	}
	tee.mu.Unlock()
	return tee
}

// endAndClose closes a Tee that no filler ever ran for, as if its source
// had returned io.EOF (so Close starts no goroutine to close it: these
// sources need no Close).
func (t *Tee) endAndClose() {
	t.mu.Lock()
	t.endLocked(io.EOF)
	t.mu.Unlock()
	t.Close()
}
