package bench

import (
	"context"
	"io"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
)

// runStats sums up the operations of one run.
type runStats struct {
	ops                             int
	ok, retryLater, failed, corrupt int
	latencies                       []time.Duration // of the ok operations, sorted
	firsts, lasts                   []time.Duration // of the ok operations, sorted
	oks                             []result        // the ok operations, in order
	sampleErr                       error           // the first error seen
}

// run sends n bodies of size bytes through s from the given number of
// concurrent workers. body, when not nil, makes each operation's body.
func (s sender) run(ctx context.Context, n, workers, size int, body func() io.Reader) runStats {
	results := make([]result, n)
	proxytest.Each(n, workers, func(i int) {
		var r io.Reader
		if body != nil {
			r = body()
		}
		results[i] = s.do(ctx, size, r)
	})
	st := runStats{ops: n, latencies: make([]time.Duration, 0, n)}
	for _, r := range results {
		switch r.outcome {
		case ok:
			st.ok++
			st.latencies = append(st.latencies, r.latency)
			st.firsts = append(st.firsts, r.first)
			st.lasts = append(st.lasts, r.last)
			st.oks = append(st.oks, r)
		case retryLater:
			st.retryLater++
		case failed:
			st.failed++
		case corrupt:
			st.corrupt++
		}
		if r.err != nil && st.sampleErr == nil {
			st.sampleErr = r.err
		}
	}
	slices.Sort(st.latencies)
	slices.Sort(st.firsts)
	slices.Sort(st.lasts)
	return st
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// pacedReader yields data at a fixed rate, a piece at a time, as a slow
// client uploads: byte i is available rate⁻¹·i after the first Read.
type pacedReader struct {
	data  []byte
	rate  float64 // bytes per second
	piece int
	start time.Time
	off   int
}

func (r *pacedReader) Read(p []byte) (int, error) {
	if r.off >= len(r.data) {
		return 0, io.EOF
	}
	if r.start.IsZero() {
		r.start = time.Now()
	}
	due := r.start.Add(time.Duration(float64(r.off) / r.rate * float64(time.Second)))
	if d := time.Until(due); d > 0 {
		time.Sleep(d)
	}
	n := copy(p[:min(len(p), r.piece)], r.data[r.off:])
	r.off += n
	return n, nil
}

// heapSampler records the peak of the Go heap (bytes in live and unswept
// heap objects) while it runs. Its goroutine is owned by the sampler: stop
// ends it and waits for it.
type heapSampler struct {
	stopc chan struct{}
	done  chan struct{}
	base  uint64 // heap objects after a GC, before the load
	peak  uint64 // written by the goroutine, read after done
}

const heapObjects = "/memory/classes/heap/objects:bytes"

func readHeap() uint64 {
	s := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapSampler() *heapSampler {
	runtime.GC()
	h := &heapSampler{stopc: make(chan struct{}), done: make(chan struct{}), base: readHeap()}
	h.peak = h.base
	go func() {
		defer close(h.done)
		t := time.NewTicker(500 * time.Microsecond)
		defer t.Stop()
		for {
			if v := readHeap(); v > h.peak {
				h.peak = v
			}
			select {
			case <-h.stopc:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

// stop ends the sampler and returns the peak growth of the heap over the
// baseline, in bytes.
func (h *heapSampler) stop() int64 {
	close(h.stopc)
	<-h.done
	if v := readHeap(); v > h.peak {
		h.peak = v
	}
	return int64(h.peak) - int64(h.base)
}

// loadStats sums up a load run.
type loadStats struct {
	runStats
	peakHeld  int64         // peak of bytes held by the transport
	bound     int64         // what bytes held must stay under; 0: no bound
	heapAdded int64         // peak of the Go heap over its baseline
	drain     time.Duration // worst time from a wave's last response close until bytes held was 0
	undrained bool          // bytes held never came back to 0
}

// maxChunk is the largest chunk pkg/teebody takes for a body that streams
// past its budget (its maxStreamChunk): such a request holds at most one.
const maxChunk = 64 * kib

// drainTimeout bounds the wait for the responses' closes and for bytes held
// to come back to 0: it only turns a leak into a failure instead of a hang.
const drainTimeout = 30 * time.Second

// load sends waves of conc concurrent bodies of size bytes; after each wave
// it waits until the proxy has closed every response and measures how long
// bytes held took to come back to 0 after the last close.
func (s *stack) load(ctx context.Context, waves, conc, size int) loadStats {
	var zeroAtClose atomic.Bool
	var target atomic.Int64
	s.closes.onClose = func(n int64) {
		if n == target.Load() {
			zeroAtClose.Store(s.held() == 0)
		}
	}
	h := startHeapSampler()
	var ls loadStats
	for range waves {
		zeroAtClose.Store(false)
		target.Store(s.closes.closed.Load() + int64(conc))
		st := s.run(ctx, conc, conc, size, nil)
		ls.ops += st.ops
		ls.ok += st.ok
		ls.retryLater += st.retryLater
		ls.failed += st.failed
		ls.corrupt += st.corrupt
		ls.latencies = append(ls.latencies, st.latencies...)
		if ls.sampleErr == nil {
			ls.sampleErr = st.sampleErr
		}
		// The client has its responses; the proxy's handlers may still be
		// closing theirs (only responses count: a failed RoundTrip has none),
		// and the transport releasing what it held (Drain, for teebody;
		// read-everything-first releases as the response closes).
		wctx, cancel := context.WithTimeout(ctx, drainTimeout)
		s.closes.waitClosed(wctx, target.Load()-int64(st.failed))
		if s.ut.drain != nil {
			_ = s.ut.drain(wctx) // a timeout shows as bytes still held, below
		}
		cancel()
		var d time.Duration
		switch {
		case s.held() != 0:
			ls.undrained = true
		case !zeroAtClose.Load():
			d = now() - time.Duration(s.closes.lastClose.Load())
		}
		ls.drain = max(ls.drain, d)
	}
	ls.heapAdded = h.stop()
	slices.Sort(ls.latencies)
	ls.peakHeld = s.peak()
	if s.ut.total > 0 {
		ls.bound = s.ut.total + int64(conc)*maxChunk
	}
	return ls
}

// ctxFor returns a context that ends with the test or benchmark.
func ctxFor(tb testing.TB) context.Context { return tb.Context() }
