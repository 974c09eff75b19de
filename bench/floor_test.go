package bench

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/iotest"
)

// kindFloor is the copy floor (floorTransport).
const kindFloor = "floor"

// floorTransport is the copy floor: the plain transport, whose request body
// copies every byte it reads once into pooled chunks and gives them back at
// Close. No replay, no goroutine, no budget, no lock order: what any proxy
// that keeps every byte of a body it also hands on must pay at the least (a
// second copy of each byte, and memory that the copy walks through), and
// nothing else. The library's extra cost is measured against it.
type floorTransport struct {
	inner http.RoundTripper
}

func (t *floorTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return t.inner.RoundTrip(req)
	}
	out := new(http.Request)
	*out = *req // the RoundTripper contract: never modify the caller's request
	out.Body = newFloorBody(req.Body, req.ContentLength)
	return t.inner.RoundTrip(out)
}

// floorSizes are the floor's chunk sizes: a body takes chunks of the
// smallest size that holds what it announced, or of the largest for a body
// that announced more (or nothing), as the library's size classes run from
// 4 KiB up.
var floorSizes = [...]int{4 << 10, 16 << 10, 64 << 10}

// floorPools recycles the floor's chunks; floorPools[i] holds *[]byte of
// capacity floorSizes[i].
var floorPools [len(floorSizes)]sync.Pool

// floorClass is the chunk size class of a body that announced length bytes
// (-1: unknown).
func floorClass(length int64) int {
	for i, s := range floorSizes {
		if length >= 0 && length <= int64(s) {
			return i
		}
	}
	return len(floorSizes) - 1
}

// A floorBody is the floor's request body. The transport may Close it from
// another goroutine while a Read is in progress (its chunks go back then,
// and the Read's bytes are not kept), so mu guards the chunks.
type floorBody struct {
	src   io.ReadCloser
	class int

	mu     sync.Mutex
	kept   []*[]byte // guarded by mu; the last one may have room left
	first  [4]*[]byte
	closed bool // guarded by mu
}

func newFloorBody(src io.ReadCloser, length int64) *floorBody {
	b := &floorBody{src: src, class: floorClass(length)}
	b.kept = b.first[:0]
	return b
}

var errFloorClosed = errors.New("bench: read of a closed floor body")

func (b *floorBody) Read(p []byte) (int, error) {
	n, err := b.src.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, errFloorClosed
	}
	b.keepLocked(p[:n])
	return n, err
}

// keepLocked copies got into the chunks, taking a new one whenever the last
// is full.
func (b *floorBody) keepLocked(got []byte) {
	for len(got) > 0 {
		var c *[]byte
		if k := len(b.kept); k > 0 && len(*b.kept[k-1]) < cap(*b.kept[k-1]) {
			c = b.kept[k-1]
		} else {
			c, _ = floorPools[b.class].Get().(*[]byte)
			if c == nil {
				s := make([]byte, 0, floorSizes[b.class])
				c = &s
			}
			b.kept = append(b.kept, c)
		}
		m := min(len(got), cap(*c)-len(*c))
		*c = append(*c, got[:m]...)
		got = got[m:]
	}
}

// held is how many bytes the body keeps now.
func (b *floorBody) held() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, c := range b.kept {
		n += len(*c)
	}
	return n
}

// Close gives the chunks back and closes the source; only the first Close
// does anything.
func (b *floorBody) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	for i, c := range b.kept {
		*c = (*c)[:0]
		floorPools[b.class].Put(c)
		b.kept[i] = nil
	}
	b.kept = nil
	b.mu.Unlock()
	return b.src.Close()
}

// TestFloorBody: the floor keeps every byte it hands on, in chunks of the
// size its announced length picks, and holds nothing once closed.
func TestFloorBody(t *testing.T) {
	for _, c := range []struct {
		size, announced int64
		chunk           int
	}{{1 * kib, 1 * kib, 4 * kib}, {64 * kib, 64 * kib, 64 * kib}, {64*kib + 1, 64*kib + 1, 64 * kib},
		{20 * kib, -1, 64 * kib}, {10 * kib, 16 * kib, 16 * kib}} {
		data := payload()[:c.size]
		src := &closeCounter{Reader: iotest.HalfReader(bytes.NewReader(data))}
		b := newFloorBody(src, c.announced)
		got, err := io.ReadAll(b)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read %d bytes, %v", c.size, len(got), err)
		}
		var kept []byte
		for _, k := range b.kept {
			if cap(*k) != c.chunk {
				t.Errorf("%d bytes announced as %d: a chunk of %d; want %d", c.size, c.announced, cap(*k), c.chunk)
			}
			kept = append(kept, *k...)
		}
		if !bytes.Equal(kept, data) {
			t.Errorf("%d bytes: kept %d bytes, not the body", c.size, len(kept))
		}
		if err := b.Close(); err != nil || src.closes != 1 {
			t.Errorf("Close: %v, the source closed %d times", err, src.closes)
		}
		if n := b.held(); n != 0 {
			t.Errorf("%d bytes held after Close", n)
		}
		if _, err := b.Read(make([]byte, 1)); !errors.Is(err, errFloorClosed) {
			t.Errorf("Read after Close: %v", err)
		}
		if b.Close(); src.closes != 1 {
			t.Errorf("a second Close closed the source again")
		}
	}
}

type closeCounter struct {
	io.Reader
	closes int
}

func (c *closeCounter) Close() error { c.closes++; return nil }
