// Package refcount provides a reference count that tells the last holder
// to let go, and only that one.
//
// A Count starts with one reference, held by its creator. A holder that
// needs the guarded resource takes a reference with Acquire. It gives the
// reference back with Release. The Release that drops the count to zero
// reports true, and its caller frees the resource. The Count is then spent:
// Acquire reports false from then on.
//
// A Count suits a resource shared by goroutines that finish in no fixed
// order, such as a buffer read by several readers. The resource is freed
// promptly, without a finalizer, and never twice.
package refcount

import "sync/atomic"

// Count is a reference count. The zero value holds one reference, its
// creator's, so a Count embedded in the struct it guards needs no
// constructor and no allocation of its own.
//
// A Count is safe for concurrent use by multiple goroutines. A Count must not
// be copied after first use.
type Count struct {
	// extra is the number of references held beyond the first, or spent
	// once the last one was given back (and stays there forever).
	extra atomic.Int64
}

// spent marks a Count whose last reference was given back.
const spent = -1

// Acquire takes one more reference and reports true. If the count has
// already dropped to zero, Acquire changes nothing and reports false.
//
// A successful Acquire happens before the Release that reports true
// returns.
func (c *Count) Acquire() bool {
	for {
		n := c.extra.Load()
		if n == spent {
			return false
		}
		if c.extra.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release gives back one reference and reports whether it was the last
// one. Exactly one Release of a Count reports true. Every other Release,
// and every successful Acquire, happens before that one returns.
//
// Release panics if it is called more often than the creator's reference
// and the successful Acquires together. Such a call is a bug in the caller,
// and going on could free a resource twice. The panic message starts with
// "refcount:".
func (c *Count) Release() (last bool) {
	for {
		n := c.extra.Load()
		if n == spent {
			panic("refcount: released more references than were held")
		}
		if c.extra.CompareAndSwap(n, n-1) {
			return n == 0
		}
	}
}
