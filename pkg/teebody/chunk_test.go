package teebody

import (
	"bytes"
	"io"
	"sync"
	"testing"
)

// The size classes, by what their doc comments promise: classFilledBy is the
// largest class that n bytes fill, sizeOfClass clamps past the largest.
func TestChunkClasses(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want int
	}{
		{0, 0}, {1, 0}, {4<<10 - 1, 0}, {4 << 10, 0}, {8<<10 - 1, 0},
		{8 << 10, 1}, {16<<10 - 1, 1}, {16 << 10, 2}, {64<<10 - 1, 3},
		{64 << 10, 4}, {256 << 10, 6}, {1<<20 - 1, 7}, {1 << 20, 8}, {4 << 20, 8}, {1 << 40, 8},
	} {
		if got := classFilledBy(tc.n); got != tc.want {
			t.Errorf("classFilledBy(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
	for i, want := range chunkSizes {
		if got := sizeOfClass(i); got != want {
			t.Errorf("sizeOfClass(%d) = %d, want %d", i, got, want)
		}
	}
	last := chunkSizes[len(chunkSizes)-1]
	for _, i := range []int{len(chunkSizes), len(chunkSizes) + 1, 100} {
		if got := sizeOfClass(i); got != last {
			t.Errorf("sizeOfClass(%d), past the largest class, = %d, want the largest, %d", i, got, last)
		}
	}
}

// fitChunk gives want if it fits in room, else the largest class that fits,
// else exactly room.
func TestFitChunk(t *testing.T) {
	for _, tc := range []struct {
		want int
		room int64
		got  int
	}{
		{16 << 10, 16 << 10, 16 << 10}, // fits exactly
		{5000, 5000, 5000},             // want itself, a class or not
		{16 << 10, 20000, 16 << 10},    // fits
		{64 << 10, 16 << 10, 16 << 10}, // a class equal to room fits
		{64 << 10, 30000, 16 << 10},
		{16 << 10, 10000, 8 << 10},
		{8 << 10, 5000, 4 << 10}, // the smallest class is a class too
		{4 << 10, 4 << 10, 4 << 10},
		{4 << 10, 3000, 3000}, // no class fits: exactly room
		{1 << 20, 2 << 20, 1 << 20},
		{1 << 20, 1<<20 - 1, 512 << 10},
	} {
		if got := fitChunk(tc.want, tc.room); got != tc.got {
			t.Errorf("fitChunk(%d, %d) = %d, want %d", tc.want, tc.room, got, tc.got)
		}
	}
}

// Budget.takeFree charges what is asked if it is free, else the largest class
// that is free, else nothing.
func TestTakeFree(t *testing.T) {
	for _, tc := range []struct {
		size int
		free int64
		want int
	}{
		{8 << 10, 8 << 10, 8 << 10}, {8 << 10, 8<<10 - 1, 4 << 10}, {8 << 10, 4<<10 + 1, 4 << 10},
		{4 << 10, 4<<10 - 1, 0}, {3000, 3000, 3000}, {3000, 2999, 0}, {20000, 19999, 16 << 10},
		{64 << 10, 30000, 16 << 10}, {1 << 20, 1<<20 - 1, 512 << 10}, {1 << 20, 4 << 20, 1 << 20},
		{1 << 20, 0, 0},
	} {
		b := NewBudget(tc.free)
		if got := b.takeFree(&Tee{}, tc.size); got != tc.want || b.InUse() != int64(tc.want) {
			t.Errorf("takeFree(%d) with %d free = %d, holding %d; want %d", tc.size, tc.free, got, b.InUse(), tc.want)
		}
	}
}

// classOf is the class of each class's capacity, and -1 for any other size.
func TestClassOf(t *testing.T) {
	for i, size := range chunkSizes {
		if size != minChunk<<i {
			t.Errorf("chunkSizes[%d] = %d, want minChunk << %d = %d", i, size, i, minChunk<<i)
		}
		for _, odd := range []int{size - 1, size + 1} {
			if got := classOf(odd); got != -1 {
				t.Errorf("classOf(%d) = %d, want -1", odd, got)
			}
		}
		if got := classOf(size); got != i {
			t.Errorf("classOf(%d) = %d, want %d", size, got, i)
		}
	}
	for _, odd := range []int{0, 1, 3000, 2 << 20, 3 << 10} {
		if got := classOf(odd); got != -1 {
			t.Errorf("classOf(%d) = %d, want -1", odd, got)
		}
	}
}

// A chunk of an odd size (a limit that no class fits) is never pooled: a pool
// holds chunks of its class's capacity only, so that a later Tee taking a
// chunk of that class gets, and is charged for, exactly that capacity.
func TestOddSizedChunkIsNotPooled(t *testing.T) {
	var (
		mu    sync.Mutex
		given []*chunk // every chunk given back to a pool
	)
	hook := func(c *chunk) {
		mu.Lock()
		given = append(given, c)
		mu.Unlock()
	}
	testHookPut.Store(&hook)
	defer testHookPut.Store(nil)

	const limit = 3000 // below the smallest class: one chunk of exactly 3000 bytes
	data := randomBytes(2000, 25)
	tee := New(io.NopCloser(bytes.NewReader(data)), WithLimit(limit))
	for range 2 {
		if got, err := io.ReadAll(mustReader(t, tee)); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("follower: %d bytes, %v", len(got), err)
		}
	}
	if got := held(tee); got != limit {
		t.Fatalf("the body is held in %d bytes, want one chunk of %d", got, limit)
	}
	closeAndWait(t, tee)
	testHookPut.Store(nil)
	mu.Lock()
	defer mu.Unlock()
	for _, c := range given {
		if c.class < 0 || c.class >= len(chunkSizes) || cap(c.buf) != chunkSizes[c.class] {
			t.Errorf("a chunk of capacity %d went to the pool of class %d", cap(c.buf), c.class)
		}
	}
	if c := getChunk(limit); c.class >= 0 || cap(c.buf) != limit {
		t.Errorf("getChunk(%d): capacity %d, class %d; want an unpooled chunk (class -1) of exactly that size", limit, cap(c.buf), c.class)
	}
}
