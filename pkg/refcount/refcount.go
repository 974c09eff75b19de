// Package refcount provides a reference count whose release function runs
// exactly once, when the last reference is given back.
//
// A Count starts with one reference, held by whoever called New. Each holder
// that wants the guarded resource to outlive its own use takes a reference
// with Acquire and gives it back with Release. When the count reaches zero the
// release function runs, on the goroutine that made the last Release, and the
// Count is spent: Acquire reports false from then on.
//
// The typical use is a resource shared by goroutines that finish in an order
// nobody controls (a buffer read by several readers, a source closed by one of
// them), where the resource must be freed promptly, without a finalizer, and
// never twice.
package refcount

import "sync/atomic"

// Count is a reference count with a release function.
//
// A Count is safe for concurrent use by multiple goroutines. The zero value is
// not usable; create a Count with New.
type Count struct {
	// refs is the number of references held, or released once the release
	// function has been called (and stays there forever).
	refs    atomic.Int64
	release func()
}

// released marks a Count whose release function has run. It is far below any
// count that real holders can reach, so that a stray Release after the end
// is still detected as misuse.
const released = -1 << 62

// New returns a Count that holds one reference. release is called exactly
// once, by the Release that drops the count to zero; it must not be nil.
func New(release func()) *Count {
	if release == nil {
		panic("refcount: nil release function")
	}
	c := &Count{release: release}
	c.refs.Store(1)
	return c
}

// Acquire takes one more reference and reports true, unless the count has
// already dropped to zero, in which case it changes nothing and reports false.
//
// A successful Acquire happens before the release function runs; a false
// result means the release function has been called (it may still be running
// on another goroutine).
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
// calls the release function before returning; every other Release returns at
// once. Every Release happens before the release function runs.
//
// Release panics, with a message prefixed "refcount:", if it is called more
// often than New and successful Acquires together: a count that would go
// below zero is a bug in the caller, and continuing could free a resource
// that is still in use.
func (c *Count) Release() {
	for {
		n := c.refs.Load()
		if n <= 0 {
			panic("refcount: released more references than were held")
		}
		if n == 1 {
			if c.refs.CompareAndSwap(1, released) {
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

// Released reports whether the count has dropped to zero, that is, whether
// the release function has been called.
func (c *Count) Released() bool {
	return c.refs.Load() <= 0
}
