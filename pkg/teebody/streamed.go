package teebody

// AfterStreamed arranges for f to run once the newest follower is done with
// the body: one of its Reads returned an error, io.EOF included, or it was
// closed. An owner that has its response thus learns when the body's sender
// stopped. It can then call Close without cutting the upload short.
//
// AfterStreamed reports whether it keeps f. It does not if the newest
// follower is done already, no follower was handed out, or the Tee is
// closed. The caller then acts at once. A kept f runs exactly once, on the
// goroutine of the Read or Close that finished the newest follower. It runs
// after that call released the Tee's lock, so f may call any method of the
// Tee, Close included. It runs before that Read or Close returns. If Close
// comes first, f never runs. A second call replaces an f not yet run.
//
// Call it after Seal: until then, NewReader may hand out a newer follower,
// and f would wait for that one. AfterStreamed never blocks on the source.
func (t *Tee) AfterStreamed(f func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.over || t.newest == nil || t.newest.done {
		return false
	}
	t.afterStreamed = f
	return true
}

// doneLocked marks f done, the first time one of its Reads returns an error
// or it is closed, and returns the function AfterStreamed kept if f is the
// newest follower, for the caller to run once it has released t.mu.
func (f *follower) doneLocked() func() {
	t := f.t
	if f.done {
		return nil
	}
	f.done = true
	if f != t.newest {
		return nil
	}
	after := t.afterStreamed
	t.afterStreamed = nil
	return after
}
