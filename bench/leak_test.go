package bench

import (
	"fmt"
	"io"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

// The tests run the benchmarks' code at a small size: every upload must
// arrive intact, and every stack must leave no goroutine behind (withStack
// checks, TestMain checks again). They assert nothing about time.

func TestProxyUploadsArriveIntact(t *testing.T) {
	for _, kind := range kinds {
		for _, h2 := range []bool{false, true} {
			for _, size := range []int{0, 1 * kib, 100*kib + 3, 1 * mib} {
				name := fmt.Sprintf("transport=%s/h2front=%t/size=%s", kind, h2, proxytest.SizeName(size))
				t.Run(name, func(t *testing.T) {
					withStack(t, stackConfig{kind: kind, frontH2: h2}, func(s *stack) {
						st := s.run(t.Context(), 4, 2, size, nil)
						if st.ok != st.ops {
							t.Fatalf("%d of %d uploads failed: %v", st.ops-st.ok, st.ops, st.sampleErr)
						}
						if size > 0 {
							checkByteTimes(t, st)
						}
					})
				})
			}
		}
	}
}

func TestSlowUploadArrivesIntact(t *testing.T) {
	const size = 256 * kib
	for _, kind := range kinds {
		t.Run("transport="+kind, func(t *testing.T) {
			withStack(t, stackConfig{kind: kind}, func(s *stack) {
				body := func() io.Reader {
					return &pacedReader{data: payload()[:size], rate: 8 * mib, piece: 8 * kib}
				}
				st := s.run(t.Context(), 2, 1, size, body)
				if st.ok != st.ops {
					t.Fatalf("%d of %d uploads failed: %v", st.ops-st.ok, st.ops, st.sampleErr)
				}
				checkByteTimes(t, st)
			})
		})
	}
}

// checkByteTimes checks that each upload's first byte reached the upstream
// no later than its last.
func checkByteTimes(t *testing.T, st runStats) {
	t.Helper()
	for i, r := range st.oks {
		if r.first > r.last {
			t.Errorf("upload %d: first byte at %v, after the last at %v", i, r.first, r.last)
		}
	}
}

// TestLoadStaysBoundedAndDrains: concurrent uploads through a budget far
// smaller than what they carry. Bytes held must stay under the budget plus
// one chunk per upload and come back to 0 once the responses are closed.
func TestLoadStaysBoundedAndDrains(t *testing.T) {
	const (
		conc = 8
		size = 256 * kib
	)
	for _, kind := range kinds {
		t.Run("transport="+kind, func(t *testing.T) {
			cfg := stackConfig{kind: kind, totalBytes: 512 * kib, perRequest: 256 * kib}
			withStack(t, cfg, func(s *stack) {
				ls := s.load(t.Context(), 2, conc, size)
				checkLoad(t, s, ls, conc)
				if s.ut.stats != nil {
					t.Logf("peak held %d (bound %d), stats: %s", ls.peakHeld, ls.bound, s.ut.stats())
				}
				switch kind {
				case kindPlain:
					if ls.peakHeld != 0 {
						t.Errorf("plain held %d bytes", ls.peakHeld)
					}
				case kindReadAll:
					if ls.peakHeld < size {
						t.Errorf("read-everything-first held at most %d bytes of a %d-byte body", ls.peakHeld, size)
					}
				case kindTeebody:
					if ls.peakHeld == 0 {
						t.Errorf("teebody held nothing: the budget was never used")
					}
				}
				if ls.retryLater > 0 {
					t.Errorf("%d uploads answered 429 without any GOAWAY: %v", ls.retryLater, ls.sampleErr)
				}
			})
		})
	}
}

// TestGoawayIsReplayed: the upstream sends a GOAWAY after a fifth of its
// responses. The transports that can replay must lose no upload; plain may
// (that is the bug), and its failures are only logged.
func TestGoawayIsReplayed(t *testing.T) {
	const size = 4 * kib
	for _, kind := range kinds {
		t.Run("transport="+kind, func(t *testing.T) {
			withStack(t, stackConfig{kind: kind, goawayChance: 0.2}, func(s *stack) {
				st := s.run(t.Context(), 120, 8, size, nil)
				if st.corrupt > 0 {
					t.Fatalf("%d corrupt uploads: %v", st.corrupt, st.sampleErr)
				}
				if s.up.srv.Goaways() == 0 {
					t.Fatalf("the upstream sent no GOAWAY in %d requests", s.up.requests.Load())
				}
				t.Logf("%d GOAWAYs, %d ok, %d failed, %d retry-later; proxy errors %v",
					s.up.srv.Goaways(), st.ok, st.failed, st.retryLater, s.errors())
				if s.ut.stats != nil {
					t.Logf("stats: %s", s.ut.stats())
				}
				if kind != kindPlain && st.ok != st.ops {
					t.Errorf("%d failed and %d 429 of %d uploads: %v", st.failed, st.retryLater, st.ops, st.sampleErr)
				}
			})
		})
	}
}

// TestGoawayThroughHandWrittenProxy: the same, through a forwarding handler
// that lacks ReverseProxy's guard on the inbound body, with an HTTP/1.1
// front (whose server bodies may come back truncated with a nil error if
// read after the handler returned: docs/design.md, fact 7) and an HTTP/2 one.
func TestGoawayThroughHandWrittenProxy(t *testing.T) {
	const size = 64*kib + 5
	for _, kind := range []string{kindTeebody, kindReadAll} {
		for _, h2 := range []bool{false, true} {
			t.Run(fmt.Sprintf("transport=%s/h2front=%t", kind, h2), func(t *testing.T) {
				cfg := stackConfig{kind: kind, goawayChance: 0.2, handWritten: true, frontH2: h2}
				withStack(t, cfg, func(s *stack) {
					st := s.run(t.Context(), 80, 8, size, nil)
					if s.ut.stats != nil {
						t.Logf("%d GOAWAYs; stats: %s", s.up.srv.Goaways(), s.ut.stats())
					}
					if st.ok != st.ops {
						t.Errorf("%d corrupt, %d failed, %d 429 of %d uploads: %v; proxy errors %v",
							st.corrupt, st.failed, st.retryLater, st.ops, st.sampleErr, s.errors())
					}
				})
			})
		}
	}
}

// TestGoawayWithSpentBudget: GOAWAYs while the budget is far too small to
// keep every body. A body that could not be kept cannot be replayed; the
// proxy must then answer 429 (which clients retry), never a 502, and never
// send the upstream a wrong body.
func TestGoawayWithSpentBudget(t *testing.T) {
	const size = 64 * kib
	cfg := stackConfig{kind: kindTeebody, goawayChance: 0.2, totalBytes: 96 * kib, perRequest: 96 * kib}
	withStack(t, cfg, func(s *stack) {
		st := s.run(t.Context(), 120, 8, size, nil)
		t.Logf("%d GOAWAYs, %d ok, %d 429, %d failed; stats: %s",
			s.up.srv.Goaways(), st.ok, st.retryLater, st.failed, s.ut.stats())
		if st.corrupt > 0 || st.failed > 0 {
			t.Errorf("%d corrupt and %d failed of %d uploads: %v; proxy errors %v",
				st.corrupt, st.failed, st.ops, st.sampleErr, s.errors())
		}
		if s.up.srv.Goaways() == 0 {
			t.Fatalf("the upstream sent no GOAWAY in %d requests", s.up.requests.Load())
		}
	})
}

// errRecorder is a testing.TB whose Errorf only records.
type errRecorder struct {
	testing.TB
	errs []string
}

func (r *errRecorder) Helper() {}

func (r *errRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestLeakCheckCatchesALeak: the check every stack ends with must fail on a
// goroutine left behind, and pass once it is gone.
func TestLeakCheckCatchesALeak(t *testing.T) {
	lc := startLeakCheck()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		<-stop
	}()
	rec := &errRecorder{TB: t}
	lc.verify(rec)
	close(stop)
	<-done
	if len(rec.errs) == 0 {
		t.Fatal("a blocked goroutine went unnoticed")
	}
	rec.errs = nil
	lc.verify(rec)
	if len(rec.errs) != 0 {
		t.Errorf("no goroutine left, yet: %v", rec.errs)
	}
}
