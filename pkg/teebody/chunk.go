package teebody

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// A chunk is one piece of the log: a byte slice that the filler appends to
// and followers copy from. The bytes below len(buf) never change while the
// chunk is in a log; the spare capacity above it belongs to the filler alone.
type chunk struct {
	buf     []byte // the bytes kept; cap(buf) is what the chunk holds in memory
	at      int64  // offset in the body of buf[0]
	charged int64  // bytes charged to the per-request limit and the budget; 0 for a streaming chunk
	class   int    // index into chunkPools, or -1 for a chunk of an odd size that is not pooled
}

// The chunk sizes, smallest first, each twice the one before: class i holds
// minChunk << i bytes. A body's first chunk is small so that a short body
// holds little; each later one is at most 4 KiB more than the bytes already
// in, so that a body that has received r bytes holds at most 2r + 4 KiB.
// Classes that double let each chunk be as large as that bound allows: a
// body that keeps arriving fills 4, 8, 16, 32 KiB and so on, each chunk one
// source Read when the source has the bytes. The largest is the read-ahead
// window (readAhead): a larger chunk would hold memory that the filler may
// not fill before the upstream takes more.
var chunkSizes = [...]int{minChunk, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20}

// minChunk is the smallest chunk size: a body's first chunk, and what a chunk
// may exceed the bytes already in by. minChunkShift is its base-2 logarithm.
const (
	minChunkShift = 12
	minChunk      = 1 << minChunkShift
)

// maxStreamChunk is the largest chunk a Tee takes once it only streams (the
// chunk no budget is charged for), so that a streaming body holds at most
// this much beyond what its newest follower has read.
const maxStreamChunk = 64 << 10

// chunkPools recycles chunks by size class; chunkPools[i] holds chunks of
// capacity chunkSizes[i].
var chunkPools [len(chunkSizes)]sync.Pool

// testHookPut, if set (by tests), takes every chunk putChunk gives back, in
// place of its pool, on the goroutine that gives it back; the chunk is the
// hook's from then on, as it would be the next Get's.
var testHookPut atomic.Pointer[func(*chunk)]

// sizeOfClass returns the capacity of class i, or of the largest class when
// i is past it.
func sizeOfClass(i int) int {
	return minChunk << min(i, len(chunkSizes)-1)
}

// classFilledBy returns the largest class that n bytes fill, or the smallest
// class when n fills none. Sizing each chunk so from what a body has left
// keeps a body of known length in chunks whose capacity exceeds it by less
// than the smallest class.
func classFilledBy(n int64) int {
	if n < minChunk {
		return 0
	}
	// bits.Len64(n) - 1 is the base-2 logarithm of n, rounded down.
	return min(bits.Len64(uint64(n))-1-minChunkShift, len(chunkSizes)-1)
}

// classOf returns the class of capacity size, or -1 if no class has it.
func classOf(size int) int {
	// size&(size-1) == 0 holds for a power of two only.
	if size < minChunk || size > chunkSizes[len(chunkSizes)-1] || size&(size-1) != 0 {
		return -1
	}
	return bits.TrailingZeros(uint(size)) - minChunkShift
}

// getChunk returns an empty chunk of capacity size. Sizes of a class come
// from its pool; any other size is allocated.
func getChunk(size int) *chunk {
	i := classOf(size)
	if i < 0 {
		return &chunk{buf: make([]byte, 0, size), class: -1}
	}
	if c, ok := chunkPools[i].Get().(*chunk); ok {
		return c
	}
	return &chunk{buf: make([]byte, 0, size), class: i}
}

// putChunk gives c back to its pool. The caller must own c: no log, filler or
// follower may touch it afterwards.
func putChunk(c *chunk) {
	if c.class < 0 {
		return
	}
	c.buf = c.buf[:0]
	c.at, c.charged = 0, 0
	if hook := testHookPut.Load(); hook != nil {
		(*hook)(c)
		return
	}
	chunkPools[c.class].Put(c)
}

// fitChunk returns the capacity for a chunk that may hold at most room bytes,
// preferring want: want itself if it fits, else the largest class that fits,
// else exactly room.
func fitChunk(want int, room int64) int {
	switch {
	case int64(want) <= room:
		return want
	case room < minChunk:
		return int(room)
	}
	return sizeOfClass(classFilledBy(room))
}
