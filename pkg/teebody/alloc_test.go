package teebody

import (
	"bytes"
	"io"
	"testing"
)

// The 1 KiB path — a Tee, its first follower read to the end, one replay,
// Close — stays within a fixed number of allocations: the Tee, its counts,
// the two followers and the filler goroutine, which also closes the source. The
// chunk comes from the pool. A change that allocates per byte or per chunk
// fails here.
func TestAllocsOneKiB(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	data := randomBytes(1<<10, 12)
	src := &rewindable{}
	buf := make([]byte, 32<<10)
	run := func() {
		src.Reset(data)
		tee := New(src)
		for range 2 {
			r, err := tee.NewReader()
			if err != nil {
				t.Fatal(err)
			}
			if n, err := io.ReadFull(r, buf[:len(data)]); n != len(data) || err != nil {
				t.Fatal(n, err)
			}
			if n, err := r.Read(buf); n != 0 || err != io.EOF {
				t.Fatal(n, err)
			}
		}
		tee.Close()
		<-tee.Done()
	}
	run() // fill the chunk pool
	const budget = 8
	if got := testing.AllocsPerRun(100, run); got > budget {
		t.Errorf("1 KiB path: %.1f allocations per request, want at most %d", got, budget)
	}
}

// rewindable is a source body that can be reused across runs without
// allocating.
type rewindable struct{ bytes.Reader }

func (r *rewindable) Close() error { return nil }
