// Package refcount provides a reference count whose release function runs
// exactly once, when the last reference is given back.
//
// A Count starts with one reference, held by the caller of New. A holder
// that needs the guarded resource takes a reference with Acquire. It gives
// the reference back with Release. When the count reaches zero, the release
// function runs on the goroutine of the last Release. The Count is then
// spent: Acquire reports false from then on.
//
// A Count suits a resource shared by goroutines that finish in no fixed
// order, such as a buffer read by several readers. The resource is freed
// promptly, without a finalizer, and never twice.
package refcount

import "sync/atomic"

// Count is a reference count with a release function.
//
// A Count is safe for concurrent use by multiple goroutines. The zero value
// is not usable; create a Count with New.
type Count struct {
	// refs is the number of references held, or spent once the release
	// function has been called (and stays there forever).
	refs    atomic.Int64
	release func()
}

// spent marks a Count whose release function has run. It is far below any
// count that real holders can reach, so that a stray Release after the end
// is still detected as misuse.
const spent = -1 << 62

// New returns a Count that holds one reference. The Release that drops the
// count to zero calls release, exactly once. New panics if release is nil.
func New(release func()) *Count {
	if release == nil {
		panic("refcount: nil release function")
	}
	c := &Count{release: release}
	c.refs.Store(1)
	return c
}

// Acquire takes one more reference and reports true. If the count has
// already dropped to zero, Acquire changes nothing and reports false.
//
// A successful Acquire happens before the release function runs. A false
// result means that the release function has been called. It may still be
// running on another goroutine.
func (c *Count) Acquire() bool {
	for {
		n := c.refs.Load()
		if n <= 0 {
			return false
		}
		if c.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release gives back one reference. The Release that drops the count to zero
// calls the release function before it returns. Every other Release returns
// at once. Every Release happens before the release function runs.
//
// Release panics if it is called more often than New and the successful
// Acquires together. Such a call is a bug in the caller, and going on could
// free a resource still in use. The panic message starts with "refcount:".
func (c *Count) Release() {
	for {
		n := c.refs.Load()
		if n <= 0 {
			panic("refcount: released more references than were held")
		}
		if n == 1 {
			if c.refs.CompareAndSwap(1, spent) {
				c.release()
				return
			}
			continue
		}
		if c.refs.CompareAndSwap(n, n-1) {
			return
		}
	}
}

// released reports whether the count has dropped to zero, that is, whether
// the release function has been called. The tests use it.
func (c *Count) released() bool {
	return c.refs.Load() <= 0
}
