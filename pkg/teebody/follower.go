package teebody

import "io"

// A follower is one body handed out by Tee.NewReader: a cursor over the log
// that starts at offset 0, waits for the filler when it reaches the end, and
// never touches the source.
type follower struct {
	t      *Tee
	off    int64 // next offset to read; guarded by t.mu
	closed bool  // Close was called; guarded by t.mu
	read   bool  // a Read returned bytes or the body's end; guarded by t.mu
	done   bool  // a Read returned an error, or Close was called; guarded by t.mu
}

var _ io.ReadCloser = (*follower)(nil)

// Read copies the next bytes of the body into p. It blocks only until bytes
// arrive, the source ends, or the follower or its Tee is closed. After the
// last byte it returns the source's own terminal result: io.EOF, or the error
// the source returned. It fails with ErrClosed once the follower or the Tee
// is closed, and with a NotReplayableError once replays are refused (Seal,
// a body over the limit or the budget, or a yield) if it needs bytes that
// were dropped, or if it is not the newest follower and has read all there is
// so far.
func (f *follower) Read(p []byte) (int, error) {
	t := f.t
	t.mu.Lock()
	n, err := f.readLocked(p)
	if !f.read && (n > 0 || err != nil && err != ErrClosed && err != t.replayErr) {
		// It got bytes, or the source's end: a Read that fails at once on a
		// closed or refused follower sends nothing.
		f.read = true
		t.readFrom++
	}
	var after func() // Tee.AfterStreamed's function, run without the lock
	if err != nil {
		after = f.doneLocked()
	}
	t.mu.Unlock()
	if after != nil {
		after()
	}
	return n, err
}

// readLocked is Read with t.mu held (Wait drops it while it waits).
func (f *follower) readLocked(p []byte) (int, error) {
	t := f.t
	for {
		switch {
		case f.closed || t.over:
			return 0, ErrClosed
		case f.off < t.start:
			return 0, t.replayErr // bytes are dropped only once replays are refused
		case len(p) == 0:
			return 0, nil
		case f.off < t.end:
			// Fill p from as many chunks as hold what it asks for, so that
			// a large caller buffer takes one Read, as from the source.
			// The log has no gaps: each chunk starts where the one before
			// it ends, so the byte after a chunk is the next chunk's first.
			n := 0
			for i := t.chunkAtLocked(f.off); n < len(p) && f.off < t.end; i++ {
				c := t.log[i]
				m := copy(p[n:], c.buf[f.off-c.at:])
				n += m
				f.off += int64(m)
			}
			t.advancedLocked(f)
			if f.off == t.end && t.srcErr != nil {
				return n, t.srcErr
			}
			return n, nil
		case t.srcErr != nil:
			return 0, t.srcErr
		case t.replayErr != nil && f != t.newest:
			// Once replays are refused the filler reads on only for the
			// newest follower; an older one waiting here could wait until
			// the Tee is closed.
			return 0, t.replayErr
		}
		if !t.fillerOn {
			t.startFillerLocked()
		}
		t.waiting++
		t.data.Wait()
		t.waiting--
	}
}

// Close makes the follower's pending and later Reads fail with ErrClosed. It
// never blocks and always returns nil; the Tee and the other followers go on.
// The Close of the newest follower runs the function Tee.AfterStreamed kept,
// before it returns; so does the first Read of it that returns an error.
func (f *follower) Close() error {
	t := f.t
	t.mu.Lock()
	if !f.closed {
		f.closed = true
		t.wakeReadersLocked()
	}
	after := f.doneLocked() // Tee.AfterStreamed's function, run without the lock
	t.mu.Unlock()
	if after != nil {
		after()
	}
	return nil
}

// advancedLocked runs after f read: it moves the front, drops, once
// replays are refused, the chunks the newest follower has finished, and
// wakes the filler if it waits and may now read a good part of readAhead
// (half of it: one wake-up per half window, not one per Read), or, once it
// streams, when the newest follower has read everything.
func (t *Tee) advancedLocked(f *follower) {
	t.front = max(t.front, f.off)
	if f == t.newest {
		t.countFreeableLocked()
	}
	if t.replayErr != nil && f == t.newest && len(t.log) > 0 {
		if head := t.log[0]; f.off >= head.at+int64(len(head.buf)) {
			t.trimLocked()
		}
	}
	if !t.fillerWaiting {
		return
	}
	if t.replayErr != nil && f == t.newest && f.off == t.end ||
		t.replayErr == nil && t.windowRoomLocked() >= readAhead/2 {
		t.room.Signal()
	}
}
