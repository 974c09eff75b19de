package teebody

import (
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// Budget is a byte budget shared by many bodies: what all the Tees that use it
// keep for replays together never exceeds its total. Beyond it, each Tee may
// hold one chunk that is not charged: the chunk of a body that only streams
// (at most 64 KiB). The chunk a filler is reading into when its Tee is closed
// stays charged until that Read returns, so a client that stalls its upload
// after the end of its request holds no memory beyond the budget.
//
// A Budget never blocks. A Tee takes budget with a non-blocking try before it
// keeps a chunk; when the try fails, that body goes on streaming without being
// kept, and only its replay is lost. (A blocking acquire would be wrong twice
// over: a request larger than the total would wait until its context ended,
// and waiters are served in order, so one large body would stall every small
// one behind it: docs/design.md, fact 8.)
//
// A Budget is safe for concurrent use by multiple goroutines. Its zero value
// is not usable; create one with NewBudget.
type Budget struct {
	total int64
	sem   *semaphore.Weighted // only ever TryAcquire'd, so it has no waiters
	inUse atomic.Int64        // bytes held now; follows sem
	peak  atomic.Int64        // highest inUse seen
}

// NewBudget returns a budget of totalBytes. A total of zero or less holds
// nothing: every body that uses it streams through without being kept.
func NewBudget(totalBytes int64) *Budget {
	if totalBytes < 0 {
		totalBytes = 0
	}
	return &Budget{total: totalBytes, sem: semaphore.NewWeighted(totalBytes)}
}

// Total returns the budget's size in bytes.
func (b *Budget) Total() int64 { return b.total }

// InUse returns the bytes held now by the Tees that use the budget. It is
// cheap and safe to call at any time.
func (b *Budget) InUse() int64 { return b.inUse.Load() }

// Peak returns the highest value InUse has had.
func (b *Budget) Peak() int64 { return b.peak.Load() }

// tryAcquire takes n bytes if they are free and reports whether it did. On
// failure the budget is unchanged.
func (b *Budget) tryAcquire(n int64) bool {
	if !b.sem.TryAcquire(n) {
		return false
	}
	now := b.inUse.Add(n)
	for {
		p := b.peak.Load()
		if now <= p || b.peak.CompareAndSwap(p, now) {
			return true
		}
	}
}

// release gives back n bytes taken by tryAcquire.
func (b *Budget) release(n int64) {
	b.inUse.Add(-n)
	b.sem.Release(n)
}
