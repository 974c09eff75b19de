package bench

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
)

// The concurrency sweep: waves of sweepLevels uploads held in flight at
// once, at each of sweepSizes.
var (
	sweepLevels = []int{1, 16, 256, 2048}
	sweepSizes  = []int{1 * kib, 64 * kib}
)

// BenchmarkSweep sends waves of conc uploads whose clients hold them open
// half-way: each client sends the first half of its body, waits until every
// upload of the wave is in flight (the proxy has read its first half, and the
// upstream too unless the transport reads everything first), then sends the
// rest. One op is one wave; the pause in the middle, where the in-flight
// figures are taken, is not timed.
//
// The in-flight figures are taken after a GC, with every upload of the wave
// held open, against the same figures before the wave, per upload:
// heap-B/req the live heap, stack-B/req the goroutine stacks,
// goroutines/req the goroutines.
func BenchmarkSweep(b *testing.B) {
	for _, conc := range sweepLevels {
		for _, kind := range kinds {
			// One stack per level and transport: its first wave dials the
			// connections, client's and upstream's, and the waves of every
			// size reuse them.
			b.Run(fmt.Sprintf("conc=%d/transport=%s", conc, kind), func(b *testing.B) {
				withStack(b, stackConfig{kind: kind}, func(s *stack) {
					s.clientTr.MaxIdleConnsPerHost = conc
					// One upstream connection carries the whole wave, so that
					// what is measured is the transports, not a storm of TLS
					// handshakes when a wave outgrows 250 streams (Go's
					// default) at a different moment for each transport.
					s.up.srv.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 2 * conc}
					warmUp(b, s, 1*kib)
					s.wave(b, conc, 1*kib) // untimed: the parent of the sizes' benchmarks
					for _, size := range sweepSizes {
						b.Run("size="+proxytest.SizeName(size), func(b *testing.B) { benchmarkWaves(b, s, conc, size) })
					}
				})
			})
		}
	}
}

func benchmarkWaves(b *testing.B, s *stack, conc, size int) {
	b.SetBytes(int64(conc * size))
	b.ReportAllocs()
	var sum inFlight
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		w := s.wave(b, conc, size)
		sum.add(w.inFlight)
		cpu += w.cpu
	}
	b.StopTimer()
	reportCPU(b, cpu)
	n := float64(b.N * conc)
	b.ReportMetric(float64(sum.heap)/n, "heap-B/req")
	b.ReportMetric(float64(sum.stacks)/n, "stack-B/req")
	b.ReportMetric(float64(sum.goroutines)/n, "goroutines/req")
}

// inFlight is what a wave adds while every upload is in flight.
type inFlight struct {
	heap, stacks, goroutines int64
}

func (f *inFlight) add(g inFlight) {
	f.heap += g.heap
	f.stacks += g.stacks
	f.goroutines += g.goroutines
}

// waveStats is one wave: what it held in flight and the CPU it used outside
// the pause.
type waveStats struct {
	inFlight
	cpu time.Duration
}

var memSamples = []metrics.Sample{
	{Name: heapObjects},
	{Name: "/memory/classes/heap/stacks:bytes"},
}

// snapshot collects garbage and returns the live heap, the stacks and the
// goroutines. It collects twice, so that what idles in a sync.Pool (chunks,
// buffers) is not counted: the first GC moves it aside, the second frees it.
func snapshot() inFlight {
	runtime.GC()
	runtime.GC()
	metrics.Read(memSamples)
	return inFlight{
		heap:       int64(memSamples[0].Value.Uint64()),
		stacks:     int64(memSamples[1].Value.Uint64()),
		goroutines: int64(runtime.NumGoroutine()),
	}
}

// wave runs one wave of conc held uploads of size bytes (see
// BenchmarkSweep); under a benchmark it pauses the timer around its
// measurements.
func (s *stack) wave(tb testing.TB, conc, size int) waveStats {
	tb.Helper()
	timer := func(on bool) {}
	if b, ok := tb.(*testing.B); ok {
		timer = func(on bool) {
			if on {
				b.StartTimer()
			} else {
				b.StopTimer()
			}
		}
	}
	timer(false)
	before := snapshot()
	var arrived sync.WaitGroup
	arrived.Add(conc)
	release := make(chan struct{})
	started := s.up.started.Load()
	results := make([]result, conc)
	var wg sync.WaitGroup
	timer(true)
	cpu0 := cpuTime()
	for i := range conc {
		wg.Go(func() {
			body := &heldReader{data: payload()[:size], half: size / 2, arrived: &arrived, release: release}
			results[i] = s.do(ctxFor(tb), size, body)
			if !body.waited { // it failed before it got half-way
				arrived.Done()
			}
		})
	}
	arrived.Wait()
	cpu1 := cpuTime()
	timer(false)
	if !s.settle(conc, started) {
		tb.Errorf("wave of %d: the first halves were not all in after %v", conc, settleTimeout)
	}
	held := snapshot()
	timer(true)
	cpu2 := cpuTime()
	close(release)
	wg.Wait()
	cpu3 := cpuTime()
	for _, r := range results {
		if r.outcome != ok {
			tb.Fatalf("wave of %d: an upload failed: %v", conc, r.err)
		}
	}
	return waveStats{
		inFlight: inFlight{
			heap:       held.heap - before.heap,
			stacks:     held.stacks - before.stacks,
			goroutines: held.goroutines - before.goroutines,
		},
		cpu: cpu1 - cpu0 + cpu3 - cpu2,
	}
}

// settle waits until the wave's first halves are in: the proxy has read
// every byte the clients wrote (the sweep's clients speak HTTP/1.1, whose
// connections the stack counts both ways), and the upstream has seen the
// first byte of each upload (for transports that forward at once). It wakes
// on the counters' progress, never on a clock, and reports whether that
// held; after settleTimeout it gives up, so that a transport that never
// settles makes the figures worse, not the run hang.
func (s *stack) settle(conc int, started int64) bool {
	deadline := time.NewTimer(settleTimeout)
	defer deadline.Stop()
	for {
		in := s.in.bytes.Load() >= s.out.bytes.Load()
		up := s.cfg.kind == kindReadAll || s.up.started.Load()-started >= int64(conc)
		if in && up {
			return true
		}
		select {
		case <-s.progress:
		case <-deadline.C:
			return false
		}
	}
}

const settleTimeout = 10 * time.Second

// heldReader yields the first half of data, then, at the next Read, reports
// that it arrived there and blocks until release is closed before it yields
// the rest: a client holding its upload open half-way.
type heldReader struct {
	data    []byte
	half    int
	off     int
	arrived *sync.WaitGroup
	release chan struct{}
	waited  bool
}

func (r *heldReader) Read(p []byte) (int, error) {
	if r.off == r.half && !r.waited {
		r.waited = true
		r.arrived.Done()
		<-r.release
	}
	if r.off >= len(r.data) {
		return 0, io.EOF
	}
	end := len(r.data)
	if r.off < r.half {
		end = r.half
	}
	n := copy(p, r.data[r.off:end])
	r.off += n
	return n, nil
}

// A wave holds every upload in flight at once, then completes them all
// intact, and leaves nothing behind, with each transport.
func TestSweepWave(t *testing.T) {
	const conc = 8
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			withStack(t, stackConfig{kind: kind}, func(s *stack) {
				w := s.wave(t, conc, 1*kib)
				// Each held upload has at least its proxy handler running.
				if w.goroutines < conc {
					t.Errorf("%d more goroutines while %d uploads were held, want at least %d", w.goroutines, conc, conc)
				}
			})
		})
	}
}
