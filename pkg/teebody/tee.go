package teebody

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/teebody/teebody/pkg/refcount"
)

// Tee makes one request body readable several times from its first byte.
// Any number of followers read it, while one filler goroutine reads the
// source.
//
// The owner makes a Tee around the body with New. It hands out followers
// with NewReader: the first as Request.Body, later ones from
// Request.GetBody. It calls Seal once a response has arrived, and Close when
// the request is over.
//
// The methods of a Tee and of its followers are safe to call concurrently
// from multiple goroutines, in parallel with each other and with Close.
type Tee struct {
	src      io.ReadCloser // read by the filler only; closed once (see sourceClosing)
	limit    int64         // most chunk capacity kept for replays; fixed by New
	budget   *Budget       // shared budget, or nil; fixed by New
	onDone   func()        // run once the last reference on alive is given back, or nil; fixed by New
	sizeHint int64         // the body's announced length, or 0 if unknown; fixed by New

	// alive holds a reference for the owner (until Close), for the filler
	// (while it runs) and for the goroutine closing the source (until
	// src.Close returns). Whoever gives back the last one runs onDone
	// (release).
	alive refcount.Count

	// mu guards the fields from here to ended, and the bytes of the log's
	// chunks up to their length. Lock order: mu before the budget's mu (a
	// Budget only ever TryLocks a Tee's mu; see Budget.reclaimLocked).
	mu   sync.Mutex
	data sync.Cond // on mu; followers wait here for bytes, the source's end, or a change of the rules
	room sync.Cond // on mu; the filler waits here until it may read on

	log    []*chunk // the kept chunks, in order; all but the last are full; on logArray until it outgrows it
	start  int64    // offset of the first byte still kept (log[0].at, or end when the log is empty)
	end    int64    // bytes read from the source so far
	front  int64    // the furthest offset any follower has read to
	srcErr error    // the source's terminal result (io.EOF or its error), once the filler saw it

	charged int64   // chunk capacity charged to the limit and the budget, the filler's chunks included
	fresh   *chunk  // a chunk the filler took for bytes not yet arrived, outside the log; owned by the filler
	refusal error   // why replays end once bytes arrive into fresh, or nil; owned by the filler
	filling *chunk  // chunk the filler is reading into outside mu, or nil; owned by the filler
	probe   [1]byte // what the filler reads into to find the end of a body of sizeHint bytes; owned by the filler

	fillerOn      bool // the filler has been started
	fillerWaiting bool // the filler waits on room
	// sourceClosing is set once the source's Close is under way: by the
	// filler after the source returned io.EOF, or else by Close.
	sourceClosing bool
	over          bool // Close was called: the request is over
	// madeYield is set, by the budget while the filler holds mu, once
	// another body has yielded to this one; it never makes another yield.
	madeYield bool

	// replayErr is nil while every byte read is kept, so that a new follower
	// can start from offset 0. Once set (overflow, Seal or a yield) it never
	// changes back; bytes behind the newest follower are dropped from then on.
	replayErr error // a NotReplayableError

	newest    *follower // the follower handed out last, or nil
	first     follower  // the first follower, kept here so that it costs no allocation
	handedOut int       // followers handed out so far
	readFrom  int       // followers that have been read from
	waiting   int       // followers waiting on data
	refused   Reason    // why NewReader first refused a follower, or 0
	peak      int64     // the most charged at once

	afterStreamed func() // kept by AfterStreamed until the newest follower is done or Close, or nil

	// ended mirrors over (set with it, under mu) for the filler's last check
	// right before a source Read, made without the lock so that the window in
	// which Close can come unseen is an atomic load wide, not an Unlock.
	ended atomic.Bool

	// freeable is, while replays are possible, the charge of the chunks at
	// the head of the log that are full and that the newest follower has
	// read: what a yield would free at least. freeableChunks is how many
	// chunks it counts. Guarded by mu; each change is offered to the budget
	// before mu is let go (Budget.offer).
	freeable       int64
	freeableChunks int

	// budgeted, yieldKey and slot belong to the budget, which guards them
	// with its own mu: what the Tee holds of it, what the budget knows a
	// yield of it would free, and the Tee's index among the bodies that can
	// yield (-1 when it is not one of them).
	budgeted int64
	yieldKey int64
	slot     int

	// logArray is the log's first backing array, so that a body of up to
	// len(logArray) chunks (1 MiB takes 10, 16 MiB 14) allocates nothing for
	// its log.
	logArray [16]*chunk

	// testHookUnlocked, if set (by tests, before the filler starts), runs on
	// the filler each time it has dropped the lock to Read the source.
	testHookUnlocked func()
}

// New returns a Tee around src. The Tee reads src in the background, once a
// follower first asks for data. It keeps what it reads for replays, within
// its limit and its budget. The limit is 50 MiB unless WithLimit sets it.
// There is no budget unless WithBudget sets one.
//
// The Tee owns src from now on. Only its filler goroutine reads src. The Tee
// closes src exactly once: as soon as src returns io.EOF, or else after
// Close. The caller must call Close when the request is over.
func New(src io.ReadCloser, opts ...Option) *Tee {
	t := &Tee{src: src, limit: defaultLimit, slot: -1}
	t.first.t = t
	t.log = t.logArray[:0]
	for _, o := range opts {
		if o.apply != nil {
			o.apply(t)
		}
	}
	t.data.L = &t.mu
	t.room.L = &t.mu
	return t
}

// NewReader returns a follower: a reader of the body from its first byte. A
// follower reads what the filler keeps, and never touches the source.
// NewReader has the signature of http.Request.GetBody.
//
// The first call succeeds unless the Tee is closed. A later call fails with
// a NotReplayableError once a replay is impossible:
//
//   - the body outgrew its limit or its budget;
//   - it yielded its budget to another body;
//   - Seal was called;
//   - the Tee is closed.
//
// A follower left without Close holds nothing after the Tee's Close. Before
// it, the bytes that the newest follower has not read stay kept.
func (t *Tee) NewReader() (io.ReadCloser, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.over:
		t.noteRefusalLocked(errOver)
		return nil, errOver
	case t.handedOut == 0:
	case t.replayErr != nil:
		t.noteRefusalLocked(t.replayErr)
		return nil, t.replayErr
	}
	f := &t.first
	if t.handedOut > 0 {
		f = &follower{t: t}
	}
	t.newest = f
	t.handedOut++
	if t.freeable > 0 {
		// The new follower needs every byte: a yield would free nothing.
		t.freeable, t.freeableChunks = 0, 0
		t.budget.offer(t, 0)
	}
	return f, nil
}

// Seal tells the Tee that a response has arrived, so no replay can happen
// any more. A replay (any NewReader call but the first) fails from then on
// with ReasonStreamedPast, unless an earlier reason applies. Every chunk the newest follower has finished is
// dropped at once. Later chunks are dropped as soon as it has read them. The
// newest follower keeps streaming the rest of the body.
//
// Seal never blocks on the source. Calling it more than once, or after
// Close, does nothing.
func (t *Tee) Seal() {
	t.mu.Lock()
	if !t.over {
		t.refuseLocked(errStreamedPast)
		t.trimLocked()
	}
	t.mu.Unlock()
}

// Close ends the request. It never blocks on the source and never calls it.
// It may be called from any goroutine, while a Read is pending. When Close
// returns:
//
//   - Every follower's Read fails with ErrClosed, one that was waiting
//     included. NewReader fails with ReasonClosed.
//   - The chunks go back to their pool, and their charge to the Budget. The
//     chunk the filler is reading into goes back when that Read returns.
//   - At most one more Read of the source runs: one under way, or one the
//     filler was about to start when Close came. What it brings is dropped.
//     No other Read of the source starts.
//   - The source is closed exactly once, never on the caller's goroutine: by
//     the filler after io.EOF, or else by a goroutine that Close starts.
//   - The function given with WithOnDone runs once the filler has exited
//     and the source's Close has returned.
//
// Close returns nil. A second call changes nothing and returns an error.
func (t *Tee) Close() error {
	// The filler checks t.ended just before each source Read (readUnlocked).
	// Closing the window between that check and the call would make Close
	// wait for the filler, which may be inside a Read: invariant 2.
	//
	// The source's Close runs on a goroutine of its own, because the Close
	// of an HTTP/1 server's request body waits for a pending Read and drains
	// the rest of the client's upload (docs/design.md, fact 7).
	t.mu.Lock()
	if t.over {
		t.mu.Unlock()
		return errTeeClosedTwice
	}
	t.over = true
	t.ended.Store(true)
	t.newest = nil
	t.afterStreamed = nil
	t.dropAllLocked()
	t.wakeReadersLocked()
	if t.fillerWaiting {
		t.room.Signal()
	}
	closeSource := !t.sourceClosing
	t.sourceClosing = true
	t.mu.Unlock()

	if closeSource {
		t.alive.Acquire() // cannot fail: the owner's reference is still held
		go t.closeSource()
	}
	t.release() // the owner's reference
	return nil
}

// closeSource closes the source and gives back its reference.
func (t *Tee) closeSource() {
	defer t.release()
	t.src.Close()
}

// release gives back one reference on alive. The last one, given back once
// the owner, the filler and the source's closer have all let go, runs
// onDone. None of them holds mu then.
func (t *Tee) release() {
	if t.alive.Release() && t.onDone != nil {
		t.onDone()
	}
}

// ReplayErr returns nil while every byte read so far is kept, so that
// NewReader can still hand out a replay. Otherwise it returns the
// NotReplayableError that says why not. Once the Tee is closed, that is
// ReasonClosed, unless an earlier reason applies.
func (t *Tee) ReplayErr() error {
	t.mu.Lock()
	err := t.replayErr
	if err == nil && t.over {
		err = errOver
	}
	t.mu.Unlock()
	return err
}

// wakeReadersLocked wakes the followers that wait on data, if any: a
// Broadcast that finds nobody waiting still costs its checks.
func (t *Tee) wakeReadersLocked() {
	if t.waiting > 0 {
		t.data.Broadcast()
	}
}

// chunkAtLocked returns the index in the log of the kept chunk that holds
// offset off, which must be in [t.start, t.end).
func (t *Tee) chunkAtLocked(off int64) int {
	// A binary search for the last chunk that starts at or below off.
	lo, hi := 0, len(t.log)-1
	for lo < hi {
		if mid := int(uint(lo+hi+1) >> 1); t.log[mid].at <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// refuseLocked ends replays for err's reason, unless they had already
// ended, and wakes the followers, for whom the rules change: from now on
// only the newest one is fed.
func (t *Tee) refuseLocked(err error) {
	if t.replayErr != nil {
		return
	}
	t.replayErr = err
	if t.budget != nil {
		t.budget.retire(t)
	}
	t.wakeReadersLocked()
}

// countFreeableLocked counts, while replays are possible, the full chunks
// that the newest follower has now finished into t.freeable, and offers
// the new amount to the budget if it grew. It runs after the newest
// follower read; only its reads make the amount grow (a chunk it has
// finished is full, so no byte arriving changes it).
func (t *Tee) countFreeableLocked() {
	if t.budget == nil || t.replayErr != nil || t.over || t.newest == nil {
		return
	}
	grew := false
	for t.freeableChunks < len(t.log) {
		c := t.log[t.freeableChunks]
		if len(c.buf) < cap(c.buf) || c.at+int64(len(c.buf)) > t.newest.off {
			break
		}
		t.freeable += c.charged
		t.freeableChunks++
		grew = grew || c.charged > 0
	}
	if grew {
		t.budget.offer(t, t.freeable)
	}
}

// yieldLocked gives up t's replay for the budget, which calls it with its
// own mu held, and returns the charge of the chunks it dropped (at least
// t.freeable), for the budget to take back (so it must not call the budget
// itself). What the newest follower has not read yet stays, still charged.
// A body with nothing to drop (its newest follower has not finished a chunk)
// does not yield: it keeps its replay, and yieldLocked returns -1.
func (t *Tee) yieldLocked() (freed int64) {
	if t.replayErr != nil || t.over || t.newest == nil || t.finishedLocked() == 0 {
		return -1
	}
	t.replayErr = errYielded
	t.wakeReadersLocked()
	return t.dropReadLocked()
}

// trimLocked drops, once replays are refused, the chunks that hold only
// bytes the newest follower has already read, and gives back their budget.
func (t *Tee) trimLocked() {
	if freed := t.dropReadLocked(); freed > 0 && t.budget != nil {
		t.budget.give(t, freed)
	}
}

// dropReadLocked drops, once replays are refused, the chunks that hold only
// bytes the newest follower has already read, and returns what they were
// charged, which it takes off t.charged but does not give back to the
// budget.
func (t *Tee) dropReadLocked() (freed int64) {
	if t.replayErr == nil {
		return 0
	}
	n := t.finishedLocked()
	if n == 0 {
		return 0
	}
	for _, c := range t.log[:n] {
		freed += c.charged
		putChunk(c)
	}
	t.charged -= freed
	rest := copy(t.log, t.log[n:])
	clear(t.log[rest:])
	t.log = t.log[:rest]
	if rest > 0 {
		t.start = t.log[0].at
	} else {
		t.start = t.end
	}
	return freed
}

// finishedLocked returns how many chunks at the head of the log hold only
// bytes the newest follower (every follower, if none is left) has read. The
// chunk the filler is reading into is never one of them: a later trim drops
// it.
func (t *Tee) finishedLocked() int {
	keepFrom := t.end
	if t.newest != nil {
		keepFrom = t.newest.off
	}
	n := 0
	for _, c := range t.log {
		if c == t.filling || c.at+int64(len(c.buf)) > keepFrom {
			break
		}
		n++
	}
	return n
}

// dropAllLocked drops every kept chunk and gives back the budget, at the end
// of the request. The chunk the filler is reading into is neither pooled nor
// refunded here: the filler does both when its Read returns.
func (t *Tee) dropAllLocked() {
	for _, c := range t.log {
		if c != t.filling {
			putChunk(c)
		}
	}
	clear(t.log)
	t.log = nil
	t.start = t.end
	var keep int64 // the filler's chunk stays charged until its Read returns
	if t.filling != nil {
		keep = t.filling.charged
	}
	if t.budget != nil {
		if t.replayErr == nil {
			// Replays end here. A Tee that refused them earlier left the
			// bodies that can yield then (refuseLocked, or the budget's
			// reclaim when it yielded) and never went back.
			t.budget.retire(t)
		}
		if t.charged > keep {
			t.budget.give(t, t.charged-keep)
		}
	}
	t.charged = keep
}

// refundLocked gives back what c was charged.
func (t *Tee) refundLocked(c *chunk) {
	if c.charged == 0 {
		return
	}
	if t.budget != nil {
		t.budget.give(t, c.charged)
	}
	t.charged -= c.charged
	c.charged = 0
}
