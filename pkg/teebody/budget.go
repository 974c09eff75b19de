package teebody

import (
	"container/heap"
	"sync"
	"sync/atomic"
)

// Budget is a byte budget shared by many bodies: what all the Tees that use it
// keep for replays together never exceeds its total. Beyond it, each Tee may
// hold one chunk that is not charged: the chunk of a body that only streams
// (at most 64 KiB). A closed Tee gives back everything it holds at once but
// the chunk its filler is reading into, which stays charged until that Read
// returns (Tee.Close), so the bound holds after the end of a request too.
//
// A Budget never blocks. A Tee takes budget before it keeps a chunk; when
// none is free, the budget takes it back from the replayable bodies holding
// the most, as long as each of them holds more than what the asking body will
// hold once served. Those bodies yield: they drop what their newest follower
// has read, stream on, and their replays fail with ReasonYielded. When no
// body can yield, the asking body streams on instead, and its replays fail
// with ReasonNoBudget. Either way only a replay is lost, never a request,
// and nobody waits. (A blocking acquire would be wrong twice over: a request
// larger than the total would wait until its context ended, and waiters are
// served in order, so one large body would stall every small one behind it,
// as golang.org/x/sync/semaphore's Weighted does.)
//
// A Budget is safe for concurrent use by multiple goroutines. Its zero value
// is not usable; create one with NewBudget.
type Budget struct {
	total int64

	// mu guards used, holders, and the budget fields of every Tee that uses
	// the budget (Tee.budgeted, Tee.slot). Lock order: a Tee's mu before
	// mu. Under mu, the budget only ever TryLocks a Tee's mu, so no
	// goroutine holding mu waits for a Tee: see reclaimLocked.
	mu      sync.Mutex
	used    int64   // bytes charged now
	holders holders // the replayable Tees that hold budget, the most first

	inUse  atomic.Int64 // mirrors used, for InUse without the lock
	peak   atomic.Int64 // highest inUse seen
	yields atomic.Int64 // bodies that yielded
}

// NewBudget returns a budget of totalBytes. A total of zero or less holds
// nothing: every body that uses it streams through without being kept.
func NewBudget(totalBytes int64) *Budget {
	return &Budget{total: max(totalBytes, 0)}
}

// Total returns the budget's size in bytes.
func (b *Budget) Total() int64 { return b.total }

// InUse returns the bytes held now by the Tees that use the budget. It is
// cheap and safe to call at any time.
func (b *Budget) InUse() int64 { return b.inUse.Load() }

// Peak returns the highest value InUse has had.
func (b *Budget) Peak() int64 { return b.peak.Load() }

// Yields returns how many bodies have given their budget back to smaller
// ones and lost their replay (ReasonYielded).
func (b *Budget) Yields() int64 { return b.yields.Load() }

// take charges n bytes to t, which must be replayable and whose mu the
// caller holds, and reports whether it did: from what is free, or else, if
// reclaim is true, from bodies that yield to t. On failure nothing is
// charged to t (bodies that yielded stay yielded: their budget is free for
// the next body).
func (b *Budget) take(t *Tee, n int64, reclaim bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.total && reclaim {
		b.reclaimLocked(t, n)
	}
	if b.used+n > b.total {
		return false
	}
	b.chargeLocked(t, n)
	if t.slot < 0 {
		heap.Push(&b.holders, t)
	} else {
		heap.Fix(&b.holders, t.slot)
	}
	return true
}

// give returns n bytes charged to t, whose mu the caller holds.
func (b *Budget) give(t *Tee, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.chargeLocked(t, -n)
	if t.slot >= 0 {
		if t.budgeted == 0 {
			heap.Remove(&b.holders, t.slot)
		} else {
			heap.Fix(&b.holders, t.slot)
		}
	}
}

// retire takes t, whose mu the caller holds and which can no longer be
// replayed, out of the bodies that can yield. What it still holds stays
// charged until it gives it back.
func (b *Budget) retire(t *Tee) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t.slot >= 0 {
		heap.Remove(&b.holders, t.slot)
	}
}

// reclaimLocked makes the replayable bodies holding the most yield to t,
// one after the other, until n bytes are free or the body holding the most
// holds no more than t would once served (so a yield never makes a holder as
// big as the one that gave, and bodies of one size never take budget from
// each other in turn).
//
// It runs with t's mu and b.mu held, and takes a yielding body's mu with
// TryLock only: a body whose mu is held (it is reading, publishing, or
// waiting for b.mu itself) is passed over this time. So the goroutine
// holding b.mu never waits for a Tee's mu, and no cycle of waits can form:
// every wait is for b.mu by a holder of one Tee's mu, or for a Tee's mu by a
// goroutine that holds no other lock.
func (b *Budget) reclaimLocked(t *Tee, n int64) {
	var passed []*Tee // bodies whose mu was busy: back into holders at the end
	for b.used+n > b.total && len(b.holders) > 0 {
		v := b.holders[0]
		if v.budgeted <= t.budgeted+n {
			break // v == t lands here too
		}
		heap.Pop(&b.holders)
		if !v.mu.TryLock() {
			passed = append(passed, v)
			continue
		}
		freed := v.yieldLocked()
		v.mu.Unlock()
		if freed < 0 {
			passed = append(passed, v) // nothing it could give: it keeps its replay
			continue
		}
		b.chargeLocked(v, -freed)
		b.yields.Add(1)
	}
	for _, v := range passed {
		heap.Push(&b.holders, v)
	}
}

// chargeLocked adds n (negative to give back) to what t holds.
func (b *Budget) chargeLocked(t *Tee, n int64) {
	t.budgeted += n
	b.used += n
	b.inUse.Store(b.used)
	if b.used > b.peak.Load() {
		b.peak.Store(b.used) // under mu: no other writer
	}
}

// holders is a max-heap of Tees by what they hold of the budget; each Tee's
// slot is its index in it, or -1. It implements heap.Interface; b.mu guards
// it.
type holders []*Tee

func (h holders) Len() int           { return len(h) }
func (h holders) Less(i, j int) bool { return h[i].budgeted > h[j].budgeted }
func (h holders) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].slot, h[j].slot = i, j
}
func (h *holders) Push(x any) {
	t := x.(*Tee)
	t.slot = len(*h)
	*h = append(*h, t)
}
func (h *holders) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.slot = -1
	return t
}
