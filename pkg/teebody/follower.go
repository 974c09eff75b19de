package teebody

import "io"

// A follower is one body handed out by Tee.NewReader: a cursor over the log
// that starts at offset 0, waits for the filler when it reaches the end, and
// never touches the source.
type follower struct {
	t      *Tee
	off    int64 // next offset to read; guarded by t.mu
	closed bool  // Close was called; guarded by t.mu
}

var _ io.ReadCloser = (*follower)(nil)

// Read copies the next bytes of the body into p. It blocks only until bytes
// arrive, the source ends, or the follower or its Tee is closed. After the
// last byte it returns the source's own terminal result: io.EOF, or the error
// the source returned. It fails with ErrClosed once the follower or the Tee
// is closed, and with a *NotReplayableError once replays are refused (Seal,
// or a body over the limit or the budget) if it needs bytes that were dropped,
// or if it is not the newest follower and has read all there is so far.
func (f *follower) Read(p []byte) (int, error) {
	t := f.t
	t.mu.Lock()
	defer t.mu.Unlock()
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
			n := 0
			for n < len(p) && f.off < t.end {
				c := t.chunkAtLocked(f.off)
				m := copy(p[n:], c.buf[f.off-c.at:])
				n += m
				f.off += int64(m)
			}
			if f == t.newest && t.replayErr != nil {
				t.advanceNewestLocked()
			}
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
		t.wake.Wait()
	}
}

// Close makes the follower's pending and later Reads fail with ErrClosed. It
// never blocks and always returns nil; the Tee and the other followers go on.
func (f *follower) Close() error {
	t := f.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if !f.closed {
		f.closed = true
		t.wake.Broadcast()
	}
	return nil
}

// advanceNewestLocked runs after the newest follower read, once replays are
// refused: it drops the chunks the follower has finished, and wakes the
// filler, which waits for it to read everything before it reads on.
func (t *Tee) advanceNewestLocked() {
	if len(t.log) > 0 {
		if head := t.log[0]; t.newest.off >= head.at+int64(len(head.buf)) {
			t.trimLocked()
		}
	}
	if t.newest.off == t.end {
		t.wake.Broadcast()
	}
}
