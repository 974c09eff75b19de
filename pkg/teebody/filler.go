package teebody

import "io"

// maxEmptyReads is how many reads in a row may return neither bytes nor an
// error before the filler gives up with io.ErrNoProgress, as bufio does.
const maxEmptyReads = 100

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
	defer t.alive.Release()
	if t.readSource() {
		t.src.Close()
	}
}

// readSource reads the source into the log until it ends or the Tee is
// closed, outside the lock for each Read and publishing what it read under
// it. It reports whether the source ended with io.EOF and is left to the
// filler to close.
func (t *Tee) readSource() (closeSource bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var (
		fresh   *chunk              // a new chunk taken, not yet in the log: kept across empty reads
		refusal *NotReplayableError // why replays end if bytes arrive into fresh, or nil
		empty   int                 // reads in a row that brought nothing
	)
	for {
		t.waitForNewestLocked()
		if t.over {
			if fresh != nil {
				putChunk(fresh) // Close gave back its charge with all the rest
			}
			return false
		}
		c := t.tailWithRoomLocked()
		var buf []byte
		switch {
		case c != nil:
		case fresh == nil && t.sizeHint > 0 && t.end == t.sizeHint:
			// Every byte the caller announced is in: most likely only
			// io.EOF is left, so look for it without taking a chunk.
			buf = t.probe[:]
		default:
			if fresh == nil {
				fresh, refusal = t.newChunkLocked()
			}
			c = fresh
		}
		if c != nil {
			buf = c.buf[len(c.buf):cap(c.buf)]
		}
		t.filling = c
		t.mu.Unlock()
		if t.testHookUnlocked != nil {
			t.testHookUnlocked()
		}
		var (
			n   int
			err error
		)
		if !t.ended.Load() { // Close may have come since the check above
			n, err = t.src.Read(buf)
		}
		t.mu.Lock()
		t.filling = nil
		if t.over {
			// Close dropped the log and the budget but left c, and its
			// charge, to us.
			if c != nil {
				t.refundLocked(c)
				putChunk(c)
			}
			return false
		}
		if n < 0 || n > len(buf) {
			n, err = 0, errInvalidRead
		}
		if n > 0 {
			if c == nil { // the probe found bytes beyond the size hint
				fresh, refusal = t.newChunkLocked()
				c = fresh
				copy(c.buf[:cap(c.buf)], buf[:n])
			}
			if c == fresh {
				c.at = t.end
				t.log = append(t.log, c)
				if t.replayErr == nil && refusal != nil {
					// Bytes arrived that cannot be kept: from now on the
					// body only streams.
					t.replayErr = refusal
				}
				fresh, refusal = nil, nil
			}
			c.buf = c.buf[:len(c.buf)+n]
			t.end += int64(n)
			t.trimLocked()
			t.wake.Broadcast()
			empty = 0
		}
		if n == 0 && err == nil {
			// Nothing changed: no waiter to wake, and the fresh chunk, if
			// any, waits for the next Read.
			if empty++; empty < maxEmptyReads {
				continue
			}
			err = io.ErrNoProgress
		}
		if err != nil {
			if fresh != nil {
				t.refundLocked(fresh)
				putChunk(fresh)
			}
			t.srcErr = err
			t.wake.Broadcast()
			if err == io.EOF {
				t.sourceClosing = true
				return true
			}
			return false
		}
	}
}

// waitForNewestLocked waits, while replays are refused, until the newest
// follower has read everything, so that at most one chunk is held beyond
// what it has read, or until the request is over.
func (t *Tee) waitForNewestLocked() {
	for t.replayErr != nil && !t.over && t.newest != nil && t.newest.off < t.end {
		t.wake.Wait()
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
// the budget while replays are possible. If it cannot be charged, refusal is
// the reason replays become impossible once bytes arrive into it; the chunk is
// then one of at most maxStreamChunk that nothing is charged for.
func (t *Tee) newChunkLocked() (c *chunk, refusal *NotReplayableError) {
	size := sizeOfClass(t.class)
	t.class++
	if rest := t.sizeHint - t.end; rest > 0 {
		size = sizeOfClass(classFilledBy(rest))
	}
	if t.replayErr != nil {
		return getChunk(min(size, maxStreamChunk)), nil
	}
	room := t.limit - t.charged
	if room <= 0 {
		return getChunk(min(size, maxStreamChunk)), errTooLarge
	}
	size = fitChunk(size, room)
	if t.budget != nil {
		// Settle for a smaller chunk rather than give up the replay.
		want := size
		for size > 0 && !t.budget.tryAcquire(int64(size)) {
			size = smallerChunk(size)
		}
		if size == 0 {
			return getChunk(min(want, maxStreamChunk)), errNoBudget
		}
	}
	c = getChunk(size)
	c.charged = int64(size)
	t.charged += c.charged
	return c, nil
}
