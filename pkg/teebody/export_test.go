package teebody

import "io"

// TeeOf returns the Tee that body follows, or nil if body is not one of its
// followers.
func TeeOf(body io.Reader) *Tee {
	if f, ok := body.(*follower); ok {
		return f.t
	}
	return nil
}

// AskNoYield makes t ask no other body to yield, as if it had made its one
// yield already. A Budget whose Tees all ask none never yields: the arm
// without the yield policy of BenchmarkYieldPolicy. Call it before t's
// filler starts, that is before its first follower's first Read.
func (t *Tee) AskNoYield() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.madeYield = true
}

// OnSourceRead makes t's filler call f each time it has let go of t's lock
// to Read the source, with the bytes read so far: its chunk for the Read is
// taken by then. Call it before t's filler starts.
func (t *Tee) OnSourceRead(f func(read int64)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.testHookUnlocked = func() { f(t.end) } // on the filler, which alone writes t.end
}
