package bench

import (
	"fmt"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// adaptiveChances are the upstreams of BenchmarkAdaptive: one that never
// sends GOAWAY, and one at the API server's maximum --goaway-chance.
var adaptiveChances = []float64{0, goawayChance}

// BenchmarkAdaptive compares always-on buffering with adaptive mode, with
// goawayWorkers uploads in flight on a fresh stack, against an upstream that
// never sends GOAWAY and one at --goaway-chance 0.02. peak-held-B is the
// most bytes the budget held at once, buffered-% the uploads given a replay
// buffer, retry-later-% the 429s (adaptive mode's price: the uploads caught
// by the first GOAWAY, before buffering was on), fail-% anything else but a
// 200; allocs/op and B/op count the whole process (client, proxy, upstream).
// Against the quiet upstream, adaptive mode must hold nothing: an upload it
// buffers there is an error, not a figure.
func BenchmarkAdaptive(b *testing.B) {
	for _, chance := range adaptiveChances {
		for _, size := range goawaySizes {
			for _, mode := range []string{"always-on", "adaptive"} {
				name := fmt.Sprintf("goaway=%g/size=%s/mode=%s", chance, proxytest.SizeName(size), mode)
				b.Run(name, func(b *testing.B) {
					cfg := stackConfig{kind: kindTeebody, goawayChance: chance, adaptive: mode == "adaptive"}
					withStack(b, cfg, func(s *stack) {
						tr := s.ut.rt.(*transport.Transport)
						warmUp(b, s, size)
						before := tr.Stats()
						b.SetBytes(int64(size))
						b.ReportAllocs()
						b.ResetTimer()
						st := s.run(ctxFor(b), b.N, goawayWorkers, size, nil)
						b.StopTimer()
						after := tr.Stats()
						if st.corrupt > 0 {
							b.Errorf("%d corrupt uploads: %v", st.corrupt, st.sampleErr)
						}
						if cfg.adaptive && chance == 0 && (after.PeakBytesHeld != 0 || after.Buffered != 0) {
							b.Errorf("adaptive mode, no GOAWAY: held %d bytes at peak, buffered %d uploads; want 0, 0",
								after.PeakBytesHeld, after.Buffered)
						}
						b.ReportMetric(float64(after.PeakBytesHeld), "peak-held-B")
						b.ReportMetric(pct(int(after.Buffered-before.Buffered), st.ops), "buffered-%")
						b.ReportMetric(pct(st.retryLater, st.ops), "retry-later-%")
						b.ReportMetric(pct(st.failed, st.ops), "fail-%")
					})
				})
			}
		}
	}
}
