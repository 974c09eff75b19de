package teebody

import (
	"bytes"
	"io"
	"testing"
)

// The 1 KiB path — a Tee, its first follower read to the end, one replay,
// Close, the function given with WithOnDone — takes a fixed number of
// allocations: the Tee (the first follower and the reference count are part
// of it), the go statement's closure that starts the filler, and the
// replay's follower. The chunk comes from
// the pool, and the filler goroutine reuses one that has exited. A change
// that allocates per byte, per chunk or per follower fails here.
func TestAllocsOneKiB(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	data := randomBytes(1<<10, 12)
	src := &rewindable{}
	buf := make([]byte, 32<<10)
	done := make(chan struct{}, 1)
	onDone := WithOnDone(func() { done <- struct{}{} }) // made once, not counted
	run := func() {
		src.Reset(data)
		tee := New(src, onDone)
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
		<-done
	}
	run() // fill the chunk pool
	const budget = 3
	got := testing.AllocsPerRun(100, run)
	t.Logf("1 KiB path: %.1f allocations per request", got)
	if got > budget {
		t.Errorf("1 KiB path: %.1f allocations per request, want at most %d", got, budget)
	}
}

// rewindable is a source body that can be reused across runs without
// allocating.
type rewindable struct{ bytes.Reader }

func (r *rewindable) Close() error { return nil }
