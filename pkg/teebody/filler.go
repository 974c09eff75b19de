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

// fill is the filler goroutine: the only reader of the source. It reads into
// the log's chunks outside the lock and publishes what it read under it.
func (t *Tee) fill() {
	defer t.alive.Release()
	t.mu.Lock()
	defer t.mu.Unlock()
	empty := 0
	for {
		c, isNew, refusal := t.nextChunkLocked()
		if c == nil {
			return // the request is over
		}
		t.filling = c
		t.mu.Unlock()
		n, err := t.src.Read(c.buf[len(c.buf):cap(c.buf)])
		t.mu.Lock()
		t.filling = nil
		if t.over {
			// Close dropped the log and the budget but left c to us.
			putChunk(c)
			return
		}
		if n < 0 || n > cap(c.buf)-len(c.buf) {
			n, err = 0, errInvalidRead
		}
		switch {
		case n > 0:
			if isNew {
				c.at = t.end
				t.log = append(t.log, c)
				if t.replayErr == nil && refusal != nil {
					// Bytes arrived that cannot be kept: from now on the
					// body only streams.
					t.replayErr = refusal
				}
			}
			c.buf = c.buf[:len(c.buf)+n]
			t.end += int64(n)
		case isNew:
			t.refundLocked(c)
			putChunk(c) // c is gone: not a field of it may be touched below
		}
		t.trimLocked()
		t.wake.Broadcast()
		if err != nil {
			t.srcErr = err
			return
		}
		if n > 0 {
			empty = 0
		} else if empty++; empty >= maxEmptyReads {
			t.srcErr = io.ErrNoProgress
			return
		}
	}
}

// nextChunkLocked returns the chunk to read into next, waiting first, while
// replays are refused, until the newest follower has read everything (so that
// at most one chunk is held beyond what it has read). It returns nil once the
// request is over.
//
// isNew says that the chunk is not in the log yet; refusal, if not nil, is
// the reason replays become impossible if bytes arrive into it (the chunk
// could not be charged to the limit or the budget).
func (t *Tee) nextChunkLocked() (c *chunk, isNew bool, refusal *NotReplayableError) {
	for t.replayErr != nil && !t.over && t.newest != nil && t.newest.off < t.end {
		t.wake.Wait()
	}
	if t.over {
		return nil, false, nil
	}
	if n := len(t.log); n > 0 {
		if tail := t.log[n-1]; len(tail.buf) < cap(tail.buf) {
			return tail, false, nil
		}
	}
	size := sizeForChunk(t.nChunks)
	t.nChunks++
	if t.replayErr != nil {
		return getChunk(size), true, nil
	}
	room := t.limit - t.charged
	if room <= 0 {
		return getChunk(size), true, errTooLarge
	}
	size = fitChunk(size, room)
	if t.budget != nil {
		// Settle for a smaller chunk rather than give up the replay.
		want := size
		for size > 0 && !t.budget.tryAcquire(int64(size)) {
			size = smallerChunk(size)
		}
		if size == 0 {
			return getChunk(want), true, errNoBudget
		}
	}
	c = getChunk(size)
	c.charged = int64(size)
	t.charged += c.charged
	return c, true, nil
}
