package teebody

import (
	"container/heap"
	"sync"
	"sync/atomic"
)

// Budget is a byte budget shared by many Tees. What they keep for replays
// together never exceeds its total. Beyond it, each Tee may hold one
// uncharged chunk of at most 64 KiB. A closed Tee gives its charge back at
// once. A chunk its filler is still reading into goes back when that Read
// returns (see Tee.Close).
//
// A Budget never blocks, and never fails a request: at worst a replay is
// lost. A Tee takes each chunk from what is free, settling for a smaller one.
// When nothing is free, it charges the chunk once bytes have arrived in it.
// If the budget is still spent then, one other body may yield to it:
//
//   - It is the replayable body whose yield frees the most.
//   - What it frees covers what the asking body is known to need.
//   - It holds more than the asking body will then hold.
//   - A body makes at most one other body yield in its life.
//
// The body that yields drops what its newest follower has read, and its
// replays fail with ReasonYielded. When no body can yield, the asking body's
// replays fail with ReasonNoBudget instead. Either body streams on.
//
// A Budget is safe for concurrent use by multiple goroutines. Its zero value
// is not usable; create one with NewBudget.
type Budget struct {
	total int64

	// mu guards used, yieldable, and the budget fields of
	// every Tee that uses the budget (Tee.budgeted, Tee.yieldKey, Tee.slot).
	// Lock order: a Tee's mu before mu. Under mu, the budget only ever
	// TryLocks a Tee's mu, so no goroutine holding mu waits for a Tee: see
	// reclaimLocked.
	mu        sync.Mutex
	used      int64     // bytes charged now
	yieldable yieldHeap // the replayable Tees whose yield would free something, the most first

	inUse  atomic.Int64 // mirrors used, for InUse without the lock
	peak   atomic.Int64 // highest inUse seen
	yields atomic.Int64 // bodies that yielded
}

// maxReclaimTries bounds the bodies a reclaim looks at: those it passes over
// (busy, or holding too little to yield without a thrash) and the one that
// yields. So a chunk request costs O(log n) in the bodies that can yield, and
// nothing in those that cannot, which are not in the heap.
const maxReclaimTries = 8

// NewBudget returns a Budget of totalBytes. A total of zero or less holds
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

// Yields returns how many bodies have yielded their budget to smaller ones,
// losing their replay (ReasonYielded).
func (b *Budget) Yields() int64 { return b.yields.Load() }

// takeFree charges t, whose mu the caller holds, for a chunk of size bytes
// from what is free, or else for the largest smaller chunk class that fits,
// and returns the size charged: 0 if not even the smallest class fits.
// Nobody yields for it: t's bytes have not arrived yet.
func (b *Budget) takeFree(t *Tee, size int) int {
	b.mu.Lock()
	if free := b.total - b.used; int64(size) > free {
		size = 0
		if free >= minChunk {
			size = sizeOfClass(classFilledBy(free)) // below size, since size > free
		}
	}
	if size > 0 {
		b.chargeLocked(t, int64(size))
	}
	b.mu.Unlock()
	return size
}

// take charges n bytes to t, which must be replayable and whose mu the
// caller holds, for bytes that have arrived, and reports whether it did:
// from what is free, or else, if cover >= n, from a body that yields to t
// and frees what t takes beyond what is free plus cover - n more (what t
// is known to need after these n bytes). On failure nothing is charged and
// nobody has yielded.
func (b *Budget) take(t *Tee, n, cover int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.total && cover >= n {
		b.reclaimLocked(t, n, cover)
	}
	if b.used+n > b.total {
		return false
	}
	b.chargeLocked(t, n)
	return true
}

// give returns n bytes charged to t, whose mu the caller holds.
func (b *Budget) give(t *Tee, n int64) {
	b.mu.Lock()
	b.chargeLocked(t, -n)
	b.mu.Unlock()
}

// offer tells the budget what a yield of t, whose mu the caller holds and
// which is replayable, would free now: the charge of the chunks its newest
// follower has finished. A Tee calls it whenever that changes, before it
// lets go of its mu, so that whoever holds t's mu and b.mu sees t's key
// equal to what t would free. A body that would free nothing leaves the
// heap: a reclaim never looks at it.
func (b *Budget) offer(t *Tee, freeable int64) {
	b.mu.Lock()
	t.yieldKey = freeable
	switch {
	case freeable > 0 && t.slot < 0:
		heap.Push(&b.yieldable, t)
	case freeable > 0:
		heap.Fix(&b.yieldable, t.slot)
	case t.slot >= 0:
		heap.Remove(&b.yieldable, t.slot)
	}
	b.mu.Unlock()
}

// retire takes t, whose mu the caller holds and which can no longer be
// replayed, out of the bodies that can yield. What it still holds stays
// charged until it gives it back.
func (b *Budget) retire(t *Tee) {
	b.mu.Lock()
	if t.slot >= 0 {
		heap.Remove(&b.yieldable, t.slot)
	}
	t.yieldKey = 0
	b.mu.Unlock()
}

// reclaimLocked makes one replayable body yield to t, whose mu the caller
// holds, so that n more bytes fit: the body whose yield frees the most, if
// that covers what cover (n, or more when t is known to need more) takes
// beyond what is free (one yield frees at least what it costs the asker; no
// body loses its replay for a part of what the asker needs), and it holds
// more than t will then hold (so a yield never makes a holder as big as the
// one that gave, and bodies of one size never take budget from each other
// in turn). It looks at no more than maxReclaimTries bodies, and never at
// one whose yield would free nothing.
//
// It runs with t's mu and b.mu held, and takes a yielding body's mu with
// TryLock only: a body whose mu is held (it is reading, publishing, or
// waiting for b.mu itself) is passed over this time. So the goroutine
// holding b.mu never waits for a Tee's mu, and no cycle of waits can form:
// every wait is for b.mu by a holder of one Tee's mu, or for a Tee's mu by a
// goroutine that holds no other lock. A body whose TryLock succeeds has no
// change of what it would free left unreported (it offers each change
// before it lets go of its mu), so its key is exact: its yield frees at
// least that much.
func (b *Budget) reclaimLocked(t *Tee, n, cover int64) {
	need := b.used + cover - b.total
	var passed [maxReclaimTries]*Tee // back into the heap at the end
	np := 0
	for np < len(passed) && len(b.yieldable) > 0 {
		v := b.yieldable[0]
		if v.yieldKey < need {
			break // the most one body frees is too little
		}
		heap.Pop(&b.yieldable)
		if v == t || v.budgeted <= t.budgeted+cover || !v.mu.TryLock() {
			passed[np] = v
			np++
			continue
		}
		freed := v.yieldLocked()
		v.mu.Unlock()
		v.yieldKey = 0
		if freed < 0 {
			continue // it cannot yield after all: it stays out
		}
		b.chargeLocked(v, -freed)
		b.yields.Add(1)
		t.madeYield = true
		break
	}
	for _, v := range passed[:np] {
		heap.Push(&b.yieldable, v)
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

// yieldHeap is a max-heap of Tees by what a yield would free (yieldKey);
// each Tee's slot is its index in it, or -1. It implements heap.Interface;
// b.mu guards it.
type yieldHeap []*Tee

func (h yieldHeap) Len() int           { return len(h) }
func (h yieldHeap) Less(i, j int) bool { return h[i].yieldKey > h[j].yieldKey }
func (h yieldHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].slot, h[j].slot = i, j
}
func (h *yieldHeap) Push(x any) {
	t := x.(*Tee)
	t.slot = len(*h)
	*h = append(*h, t)
}
func (h *yieldHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.slot = -1
	return t
}
