package teebody

// Usage tells what a Tee has done so far. Tee.Usage returns it.
type Usage struct {
	// ReadFrom is how many followers a Read has returned bytes from, or the
	// source's end (io.EOF or its error).
	ReadFrom int
	// NewestRead reports whether the follower handed out last is one of
	// those.
	NewestRead bool
	// Refused is why NewReader first refused a follower, or 0 if it has
	// refused none. The refusal of a first follower, on a closed Tee, counts
	// too.
	Refused Reason
	// PeakBytes is the most memory the Tee has held at once, in bytes of
	// chunk capacity.
	PeakBytes int64
}

// Usage returns what t has done so far. It is safe to call at any time,
// after Close too.
func (t *Tee) Usage() Usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Usage{
		ReadFrom:   t.readFrom,
		NewestRead: t.newest != nil && t.newest.read,
		Refused:    t.refused,
		PeakBytes:  t.peak,
	}
}

// chargeLocked adds n bytes of chunk capacity to what t holds for replays.
func (t *Tee) chargeLocked(n int64) {
	t.charged += n
	t.peak = max(t.peak, t.charged)
}

// noteRefusalLocked records err, which NewReader returns, if it is the first
// refusal.
func (t *Tee) noteRefusalLocked(err error) {
	if t.refused == 0 {
		if nre, ok := err.(NotReplayableError); ok {
			t.refused = nre.reason
		}
	}
}
