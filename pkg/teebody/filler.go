package teebody

import "io"

// maxEmptyReads is how many reads in a row may return neither bytes nor an
// error before the filler gives up with io.ErrNoProgress, as bufio does.
const maxEmptyReads = 100

// readAhead is how far the filler reads past the furthest follower while
// replays are possible: the window Go's HTTP/2 server grants a stream. So
// the filler reads no more of the client than the upstream's flow control
// lets the body's sender take, plus this much, and a slow upstream slows the
// client down as it does through a plain proxy. Once replays are refused, the
// filler reads only when the newest follower has read everything.
const readAhead = 1 << 20

// startFillerLocked starts the filler goroutine. It runs until the source
// ends or the Tee is closed, holding a reference on alive until it exits.
func (t *Tee) startFillerLocked() {
	t.fillerOn = true
	t.alive.Acquire() // cannot fail: the owner's reference is held until over
	go t.fill()
}

// fill is the filler goroutine: the only reader of the source. Once the
// source has returned io.EOF, the filler closes it itself: no Read of it is
// pending then (the filler is its only reader), so its Close has nothing to
// wait for, and Close, run by the owner, never has to touch the source.
func (t *Tee) fill() {
	defer t.release()
	if t.readSource() {
		t.src.Close()
	}
}

// readSource reads the source into the log until it ends or the Tee is
// closed. Each turn has three steps: wait until a follower needs more
// (waitForRoomLocked), Read the source outside the lock (readUnlocked), and
// publish what came (publishLocked). It reports whether the source ended
// with io.EOF and is left to the filler to close.
func (t *Tee) readSource() (closeSource bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	empty := 0 // reads in a row that brought nothing
	for {
		if !t.waitForRoomLocked() {
			t.dropFreshLocked()
			return false
		}
		c, buf := t.nextBufferLocked()
		n, err := t.readUnlocked(c, buf)
		if t.over {
			// Close dropped the log and the budget but left c, and its
			// charge, to us.
			if c != nil {
				t.refundLocked(c)
				putChunk(c)
			}
			t.fresh = nil
			return false
		}
		if n > 0 {
			t.publishLocked(c, buf[:n])
			empty = 0
		} else if err == nil {
			// Nothing changed: no waiter to wake, and the fresh chunk, if
			// any, waits for the next Read.
			if empty++; empty < maxEmptyReads {
				continue
			}
			err = io.ErrNoProgress
		}
		if err != nil {
			return t.endLocked(err)
		}
	}
}

// waitForRoomLocked waits until the filler may read on, and reports false
// if the request is over instead.
func (t *Tee) waitForRoomLocked() bool {
	for !t.over && !t.mayReadLocked() {
		t.fillerWaiting = true
		t.room.Wait()
		t.fillerWaiting = false
	}
	return !t.over
}

// mayReadLocked reports whether the filler may read the source now: while
// replays are possible, as long as it is less than readAhead past the
// furthest follower; once they are refused, when the newest follower has
// read everything, so that at most one chunk is held beyond what it has
// read. A follower waiting for bytes has read everything, so the filler
// never waits while a follower does.
func (t *Tee) mayReadLocked() bool {
	if t.replayErr != nil {
		return t.newest == nil || t.newest.off >= t.end
	}
	return t.windowRoomLocked() > 0
}

// windowRoomLocked is how many bytes the filler may read before it is
// readAhead past the furthest follower.
func (t *Tee) windowRoomLocked() int64 { return readAhead - (t.end - t.front) }

// nextBufferLocked returns where the next source Read goes: the room left in
// the log's last chunk, else in a fresh chunk (taken now, or kept from an
// empty read), or the one-byte probe once every announced byte is in (c is
// nil then). While replays are possible, the room is cut so that the filler
// stays within readAhead of the furthest follower.
func (t *Tee) nextBufferLocked() (c *chunk, buf []byte) {
	switch c = t.tailWithRoomLocked(); {
	case c != nil:
	case t.fresh == nil && t.sizeHint > 0 && t.end == t.sizeHint:
		// Every byte the caller announced is in: most likely only io.EOF
		// is left, so look for it without taking a chunk.
		return nil, t.probe[:]
	default:
		if t.fresh == nil {
			t.fresh, t.refusal = t.newChunkLocked()
		}
		c = t.fresh
	}
	buf = c.buf[len(c.buf):cap(c.buf)]
	if t.replayErr == nil {
		buf = buf[:min(int64(len(buf)), t.windowRoomLocked())]
	}
	return c, buf
}

// readUnlocked reads the source into buf, which is c's spare room or the
// probe, with mu released; c is the filler's own until the lock is back.
func (t *Tee) readUnlocked(c *chunk, buf []byte) (n int, err error) {
	t.filling = c
	t.mu.Unlock()
	if t.testHookUnlocked != nil {
		t.testHookUnlocked()
	}
	if !t.ended.Load() { // Close may have come since the check under the lock
		n, err = t.src.Read(buf)
	}
	t.mu.Lock()
	t.filling = nil
	if n < 0 || n > len(buf) {
		n, err = 0, errInvalidRead
	}
	return n, err
}

// publishLocked appends the bytes a Read brought into c (nil: the probe's)
// to the log, and wakes the followers.
func (t *Tee) publishLocked(c *chunk, got []byte) {
	if c == nil { // the probe found bytes beyond the size hint
		t.fresh, t.refusal = t.newChunkLocked()
		c = t.fresh
		copy(c.buf[:cap(c.buf)], got)
	}
	if c == t.fresh {
		if t.refusal == nil && t.replayErr == nil && t.budget != nil && c.charged == 0 {
			t.refusal = t.chargeArrivedLocked(c)
		}
		c.at = t.end
		t.log = append(t.log, c)
		if t.refusal != nil {
			// Bytes arrived that cannot be kept: from now on the body
			// only streams.
			t.refuseLocked(t.refusal)
		}
		t.fresh, t.refusal = nil, nil
	}
	c.buf = c.buf[:len(c.buf)+len(got)]
	t.end += int64(len(got))
	if t.replayErr != nil { // while replays are possible, trimLocked drops nothing
		t.trimLocked()
	}
	t.wakeReadersLocked()
}

// endLocked records the source's terminal result and wakes the followers. It
// reports whether the result is io.EOF, which leaves the source to the
// filler to close.
func (t *Tee) endLocked(err error) (closeSource bool) {
	t.dropFreshLocked()
	t.srcErr = err
	t.wakeReadersLocked()
	if err == io.EOF {
		t.sourceClosing = true
		return true
	}
	return false
}

// dropFreshLocked gives back the fresh chunk, if any: the source ended or the
// request is over before bytes arrived into it. (After Close its charge is
// already back; refundLocked then finds nothing left to refund.)
func (t *Tee) dropFreshLocked() {
	if t.fresh != nil {
		if !t.over {
			t.refundLocked(t.fresh)
		}
		putChunk(t.fresh)
		t.fresh, t.refusal = nil, nil
	}
}

// tailWithRoomLocked returns the last chunk of the log if it has room left,
// else nil.
func (t *Tee) tailWithRoomLocked() *chunk {
	if n := len(t.log); n > 0 {
		if tail := t.log[n-1]; len(tail.buf) < cap(tail.buf) {
			return tail
		}
	}
	return nil
}

// newChunkLocked takes the next chunk to read into, charged to the limit and
// the budget while replays are possible. Its size is what the body has shown
// it fills: the largest size class no bigger than minChunk more than the
// bytes read so far (so a body that has received r bytes holds at most
// 2r + minChunk, never budget for bytes it only announced), no bigger than
// the rest of a body of known length, and no bigger than what the filler may
// read before it waits for the followers (so a body whose upstream reads
// slowly holds at most readAhead + minChunk beyond what its furthest follower
// has read). From the budget it takes only what is
// free, settling for a smaller chunk rather than none, so that no body
// yields for bytes that have not arrived (and may never). When not even the
// smallest chunk is free, the chunk is one of at most maxStreamChunk that
// nothing is charged for yet: chargeArrivedLocked charges it once bytes have
// arrived into it. If the chunk is over the limit, refusal is the reason
// replays become impossible once bytes arrive into it; the chunk is then
// one of at most maxStreamChunk that nothing is charged for.
func (t *Tee) newChunkLocked() (c *chunk, refusal error) {
	size := sizeOfClass(classFilledBy(t.end + minChunk))
	if rest := t.sizeHint - t.end; rest > 0 {
		size = min(size, sizeOfClass(classFilledBy(rest)))
	}
	if t.replayErr != nil {
		return getChunk(min(size, maxStreamChunk)), nil
	}
	size = min(size, sizeOfClass(classFilledBy(t.windowRoomLocked())))
	room := t.limit - t.charged
	if room <= 0 {
		return getChunk(min(size, maxStreamChunk)), errTooLarge
	}
	size = fitChunk(size, room)
	if t.budget != nil {
		want := size
		if size = t.budget.takeFree(t, size); size == 0 {
			return getChunk(min(want, maxStreamChunk)), nil
		}
	}
	c = getChunk(size)
	c.charged = int64(size)
	t.chargeLocked(c.charged)
	return c, nil
}

// chargeArrivedLocked charges c, a fresh chunk that bytes have just arrived
// into uncharged (newChunkLocked found nothing free), for its capacity, and
// returns nil; or, if the budget cannot hold it even after a yield, the
// reason replays end (c then stays uncharged: the chunk of a body that only
// streams).
//
// A body makes at most one other yield, once in its life, and only if the
// yield frees what it needs: with a size hint, the rest of the body, so
// that it keeps its replay to the end (a yield that covers one chunk and
// not the next would be a replay lost for nothing); without one, all it
// will then hold, so that it can grow to twice that before it needs more
// (as its chunks grow). A body that announced more than it could ever keep
// makes nobody yield: it would lose its replay anyway.
func (t *Tee) chargeArrivedLocked(c *chunk) error {
	size := int64(cap(c.buf))
	cover := t.charged + size
	if t.sizeHint > 0 {
		cover = max(size, t.sizeHint-t.end)
	}
	if t.madeYield || t.sizeHint > min(t.limit, t.budget.Total()) {
		cover = 0 // nobody yields
	}
	if !t.budget.take(t, size, cover) {
		return errNoBudget
	}
	c.charged = size
	t.chargeLocked(size)
	return nil
}
