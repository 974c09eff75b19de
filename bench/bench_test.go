package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/internal/quantile"
)

// The benchmark parameters. run.sh and docs/BENCHMARKS.md quote them.
var proxySizes = []int{1 * kib, 64 * kib, 1 * mib, 16 * mib}

const (
	// slowSize bytes are uploaded at slowRate bytes per second, slowPiece
	// bytes at a time: half a second per upload.
	slowSize  = 16 * mib
	slowRate  = 32 * mib
	slowPiece = 16 * kib

	// loadConc concurrent uploads of loadSize bytes per wave, through a
	// teebody budget of loadTotal bytes (loadPerRequest per request).
	loadConc       = 32
	loadSize       = 1 * mib
	loadTotal      = 4 * mib
	loadPerRequest = 1 * mib

	// goawayChance is the Kubernetes API server's maximum --goaway-chance;
	// goawayWorkers requests are in flight at once so that some are sent on
	// a connection whose GOAWAY is on its way.
	goawayChance  = 0.02
	goawayWorkers = 8
)

var goawaySizes = []int{1 * kib, 1 * mib}

// withStack runs fn on a fresh stack, then closes it and checks for leaks.
func withStack(tb testing.TB, cfg stackConfig, fn func(s *stack)) {
	tb.Helper()
	lc := startLeakCheck()
	s := newStack(tb, cfg)
	defer func() {
		s.close()
		if s.ut.drain != nil {
			ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
			defer cancel()
			if err := s.ut.drain(ctx); err != nil {
				tb.Errorf("the transport still holds bodies %v after the servers closed: %v", drainTimeout, err)
			}
		}
		lc.verify(tb)
	}()
	fn(s)
}

// warmUp sends one body so that the connections exist before the timer
// starts: TLS handshakes are not what is measured.
func warmUp(b *testing.B, s *stack, size int) {
	b.Helper()
	if r := s.do(ctxFor(b), size, nil); r.outcome != ok {
		b.Fatalf("warm-up: %v", r.err)
	}
}

func reportLatency(b *testing.B, st runStats) {
	b.ReportMetric(quantile.Of(st.latencies, 0.50).Seconds(), "p50-s")
	b.ReportMetric(quantile.Of(st.latencies, 0.99).Seconds(), "p99-s")
}

// reportCPU reports the process's CPU time per op (user and system, all
// goroutines: client, proxy and upstream alike).
func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s")
}

// BenchmarkProxy sends bodies one at a time through the proxy: ns/op is the
// latency of one upload, MB/s its throughput.
//
// The client's write pattern decides how the proxy reads, so it is a
// parameter: write=length sends a Content-Length and the body from a
// bytes.Reader (net/http writes it to the socket in 32 KiB pieces, and the
// proxy's HTTP/2 transport reads it straight from the socket, up to 512 KiB at
// a time); write=chunked sends it chunked (32 KiB chunks), as a client that
// streams a body of unknown length does, and then the proxy's reads stop at
// each chunk. out-KiB/write is the client's mean write, in-KiB/read the
// proxy's mean read of its inbound connection.
func BenchmarkProxy(b *testing.B) {
	for _, size := range proxySizes {
		for _, write := range []string{"length", "chunked"} {
			if write == "chunked" && size < chunkedFrom {
				continue
			}
			for _, kind := range kinds {
				name := fmt.Sprintf("size=%s/write=%s/transport=%s", proxytest.SizeName(size), write, kind)
				b.Run(name, func(b *testing.B) {
					var body func() io.Reader
					if write == "chunked" {
						body = func() io.Reader { return chunkedBody{bytes.NewReader(payload()[:size])} }
					}
					benchmarkProxy(b, kind, size, body)
				})
			}
		}
	}
}

// chunkedFrom is the smallest size BenchmarkProxy also sends chunked.
const chunkedFrom = 1 * mib

func benchmarkProxy(b *testing.B, kind string, size int, body func() io.Reader) {
	withStack(b, stackConfig{kind: kind}, func(s *stack) {
		warmUp(b, s, size)
		b.SetBytes(int64(size))
		b.ReportAllocs()
		s.resetCounts()
		b.ResetTimer()
		cpu0 := cpuTime()
		st := s.run(ctxFor(b), b.N, 1, size, body)
		b.StopTimer()
		reportCPU(b, cpuTime()-cpu0)
		b.ReportMetric(s.kibPerRead(), "in-KiB/read")
		b.ReportMetric(s.kibPerWrite(), "out-KiB/write")
		if st.ok != st.ops {
			b.Errorf("%d of %d uploads failed: %v", st.ops-st.ok, st.ops, st.sampleErr)
		}
		reportLatency(b, st)
	})
}

// BenchmarkSlowClient uploads slowSize bytes at slowRate: the client, not
// the network, sets the pace. first-byte-s is when the upstream read the
// first byte, last-byte-s the last, both from the start of the upload.
func BenchmarkSlowClient(b *testing.B) {
	for _, kind := range kinds {
		b.Run(fmt.Sprintf("size=%s/transport=%s", proxytest.SizeName(slowSize), kind), func(b *testing.B) {
			withStack(b, stackConfig{kind: kind}, func(s *stack) {
				warmUp(b, s, 1*kib)
				body := func() io.Reader {
					return &pacedReader{data: payload()[:slowSize], rate: slowRate, piece: slowPiece}
				}
				b.ReportAllocs()
				b.ResetTimer()
				st := s.run(ctxFor(b), b.N, 1, slowSize, body)
				b.StopTimer()
				if st.ok != st.ops {
					b.Errorf("%d of %d uploads failed: %v", st.ops-st.ok, st.ops, st.sampleErr)
				}
				b.ReportMetric(quantile.Of(st.firsts, 0.5).Seconds(), "first-byte-s")
				b.ReportMetric(quantile.Of(st.lasts, 0.5).Seconds(), "last-byte-s")
			})
		})
	}
}

// BenchmarkLoad sends waves of loadConc concurrent uploads; one op is one
// wave. peak-held-MiB is the peak of request-body bytes the transport held
// (for teebody, Budget.Peak), bound-MiB what the design allows (the budget
// plus one chunk per request in flight), heap-added-MiB the peak of the Go
// heap over its level before the run, drain-s the worst time from a wave's
// last response close until bytes held was back to 0.
func BenchmarkLoad(b *testing.B) {
	for _, kind := range kinds {
		b.Run(fmt.Sprintf("conc=%d/size=%s/transport=%s", loadConc, proxytest.SizeName(loadSize), kind), func(b *testing.B) {
			cfg := stackConfig{kind: kind, totalBytes: loadTotal, perRequest: loadPerRequest}
			withStack(b, cfg, func(s *stack) {
				warmUp(b, s, 1*kib)
				b.SetBytes(loadConc * loadSize)
				b.ReportAllocs()
				s.resetCounts()
				b.ResetTimer()
				cpu0 := cpuTime()
				ls := s.load(ctxFor(b), b.N, loadConc, loadSize)
				b.StopTimer()
				reportCPU(b, cpuTime()-cpu0)
				b.ReportMetric(s.kibPerRead(), "in-KiB/read")
				checkLoad(b, s, ls, loadConc)
				b.ReportMetric(float64(ls.peakHeld)/mib, "peak-held-MiB")
				if ls.bound > 0 {
					b.ReportMetric(float64(ls.bound)/mib, "bound-MiB")
				}
				b.ReportMetric(float64(ls.heapAdded)/mib, "heap-added-MiB")
				b.ReportMetric(ls.drain.Seconds(), "drain-s")
				b.ReportMetric(pct(ls.retryLater, ls.ops), "retry-later-%")
			})
		})
	}
}

// checkLoad fails tb when a load run broke an invariant that does not
// depend on timing: corrupt or failed uploads, bytes held above the bound,
// bytes held not back to 0.
func checkLoad(tb testing.TB, s *stack, ls loadStats, conc int) {
	tb.Helper()
	if ls.corrupt > 0 || ls.failed > 0 {
		tb.Errorf("%d corrupt, %d failed of %d uploads: %v", ls.corrupt, ls.failed, ls.ops, ls.sampleErr)
	}
	if ls.bound > 0 && ls.peakHeld > ls.bound {
		tb.Errorf("peak bytes held %d, above the bound %d (budget %d + %d × %d)",
			ls.peakHeld, ls.bound, s.ut.total, conc, maxChunk)
	}
	if ls.undrained {
		tb.Errorf("bytes held still %d %v after the last response was closed", s.held(), drainTimeout)
	}
}

// BenchmarkGoaway is BenchmarkProxy with the upstream at --goaway-chance
// 0.02 and goawayWorkers uploads in flight: ns/op is wall time per upload
// (so 1/throughput), fail-% the uploads that did not get a 200 nor a 429,
// retry-later-% the 429s, goaway-% the responses that carried a GOAWAY.
func BenchmarkGoaway(b *testing.B) {
	for _, size := range goawaySizes {
		for _, kind := range kinds {
			b.Run(fmt.Sprintf("size=%s/transport=%s", proxytest.SizeName(size), kind), func(b *testing.B) {
				withStack(b, stackConfig{kind: kind, goawayChance: goawayChance}, func(s *stack) {
					warmUp(b, s, size)
					goaways0 := s.up.srv.Goaways()
					s.up.requests.Store(0)
					b.SetBytes(int64(size))
					b.ReportAllocs()
					b.ResetTimer()
					cpu0 := cpuTime()
					st := s.run(ctxFor(b), b.N, goawayWorkers, size, nil)
					b.StopTimer()
					reportCPU(b, cpuTime()-cpu0)
					if st.corrupt > 0 {
						b.Errorf("%d corrupt uploads: %v", st.corrupt, st.sampleErr)
					}
					reportLatency(b, st)
					b.ReportMetric(pct(st.failed, st.ops), "fail-%")
					b.ReportMetric(pct(st.retryLater, st.ops), "retry-later-%")
					b.ReportMetric(pct(int(s.up.srv.Goaways()-goaways0), int(s.up.requests.Load())), "goaway-%")
				})
			})
		}
	}
}
