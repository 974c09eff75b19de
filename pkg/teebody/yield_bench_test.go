package teebody_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/noisytest"
	"github.com/teebody/teebody/internal/rusage"
	"github.com/teebody/teebody/pkg/teebody"
)

// BenchmarkYieldPolicy measures what the budget's yields buy, and what they
// cost, side by side: the policy as it is (yield=on), and a budget that
// never yields (yield=off: every Tee asks no other body to yield, as if it
// had made its one yield already; see AskNoYield).
//
// The scenario is the "stalled" one of BenchmarkNoisy (bench/noisy_test.go),
// the one of its scenarios that spends the budget: 12 uploads send 4 MiB of
// 5 MiB and stall, on a budget of 50 MiB (5 MiB per request); then b.N
// writes of 1 to 64 KiB (seeded) from 32 clients. HTTP/1.1 clients,
// httputil.ReverseProxy over transport.New with ErrorHandler, a TLS HTTP/2
// upstream that ends 5% of its connections after a response, all on
// loopback. Run it with -benchtime 3000x to make BenchmarkNoisy's 3,000
// writes.
//
// Per write, it reports time, CPU time (user and system, of the whole
// process: clients, proxy and upstream), bytes and allocations. Over the
// run, it reports how many writes lost their replay (lost-replays: to the
// budget or to a yield, before their answer), were answered 429, or failed
// otherwise, and how many bodies yielded.
func BenchmarkYieldPolicy(b *testing.B) {
	for _, yield := range []bool{true, false} {
		name := "scenario=stalled/yield=on"
		if !yield {
			name = "scenario=stalled/yield=off"
		}
		b.Run(name, func(b *testing.B) { benchmarkYieldStalled(b, yield) })
	}
}

func benchmarkYieldStalled(b *testing.B, yield bool) {
	uploads := noisytest.StalledUploads(yieldPayload())
	s := newYieldStack(b, yield, uploads.Sent)
	uploads.Header = http.Header{hdrStall: {"1"}}
	uploads.Settled = s.settled()
	s.Stall(b, uploads)

	before := s.Transport.Stats()
	if before.Yields != 0 {
		b.Fatalf("the stalled uploads made %d yields among them: the arms start apart", before.Yields)
	}
	cpu := rusage.CPU()
	b.ReportAllocs()
	b.ResetTimer()
	retryLater, failed := s.writes(b, b.N)
	b.StopTimer()
	cpu = rusage.CPU() - cpu

	if !yield && s.marked.Load() == 0 {
		b.Fatal("yield=off marked no Tee")
	}
	if got := s.Transport.Stats().Yields - before.Yields; !yield && got != 0 {
		b.Fatalf("yield=off: %d bodies yielded", got)
	}
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	b.ReportMetric(float64(before.BudgetBytes-before.BytesHeld)/(1<<10), "KiB-free-at-start")
	b.ReportMetric(float64(s.lost.Load()), "lost-replays")
	b.ReportMetric(float64(retryLater), "429s")
	b.ReportMetric(float64(failed), "failed")
	b.ReportMetric(float64(s.Transport.Stats().Yields-before.Yields), "yields")
}

// hdrStall marks the uploads that stall, for the front and the upstream.
const hdrStall = "X-Stall"

// yieldStack is BenchmarkNoisy's stack, on the stalled scenario's budget.
// Its inner RoundTripper marks each Tee with AskNoYield when yields are off,
// and hands the Tee of each write to the front, which counts it among the
// lost replays if its replay ended before its answer.
type yieldStack struct {
	*noisytest.Stack
	arrived chan struct{} // one per stalled upload of which the upstream got want bytes
	waiting chan struct{} // one per stalled upload whose filler waits for more than want bytes
	want    int64
	marked  atomic.Int64 // Tees marked with AskNoYield
	lost    atomic.Int64 // writes whose replay the budget or a yield ended before their answer
	wrote   sync.WaitGroup
}

// teeKey is the context key under which the front leaves a write's slot,
// for the inner RoundTripper to put its Tee in.
type teeKey struct{}

func newYieldStack(b *testing.B, yield bool, want int64) *yieldStack {
	s := &yieldStack{arrived: make(chan struct{}, 64), waiting: make(chan struct{}, 64), want: want}
	s.Stack = noisytest.New(b, noisytest.Options{
		Config:   noisytest.StalledConfig(),
		Upstream: http.HandlerFunc(s.serve),
		Inner:    func(up http.RoundTripper) http.RoundTripper { return s.inner(up, yield) },
		Front:    s.front,
	})
	return s
}

// inner wraps the upstream's RoundTripper: it marks each Tee with
// AskNoYield unless yield, reports when a stalled upload's filler has read
// want bytes, and puts each write's Tee in its slot.
func (s *yieldStack) inner(up http.RoundTripper, yield bool) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if tee := teebody.TeeOf(r.Body); tee != nil {
			if !yield {
				tee.AskNoYield() // before the filler starts: the inner transport has not read yet
				s.marked.Add(1)
			}
			if r.Header.Get(hdrStall) != "" {
				sent := false
				tee.OnSourceRead(func(read int64) {
					if read >= s.want && !sent {
						sent = true
						s.waiting <- struct{}{}
					}
				})
			}
			if slot, ok := r.Context().Value(teeKey{}).(*atomic.Pointer[teebody.Tee]); ok {
				slot.Store(tee)
			}
		}
		return up.RoundTrip(r)
	})
}

// front serves the proxy, and counts each write whose replay the budget or
// a yield ended before its answer.
func (s *yieldStack) front(proxy http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(hdrStall) != "" {
			proxy.ServeHTTP(w, r)
			return
		}
		defer s.wrote.Done()
		var slot atomic.Pointer[teebody.Tee]
		proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), teeKey{}, &slot)))
		if tee := slot.Load(); tee != nil {
			// The Tee is closed: its reason is ReasonClosed, unless the
			// answer sealed it first (ReasonStreamedPast) or its replay
			// had ended before.
			nre, _ := errors.AsType[teebody.NotReplayableError](tee.ReplayErr())
			if r := nre.Reason(); r == teebody.ReasonNoBudget || r == teebody.ReasonYielded {
				s.lost.Add(1)
			}
		}
	})
}

// serve is the upstream: it reads the body whole, and once want bytes of a
// stalled upload are in it counts as arrived. It answers 200 when the
// body's length matches its Content-Length.
func (s *yieldStack) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(hdrStall) == "" {
		noisytest.Consume(w, r, 0, 0, nil)
		return
	}
	noisytest.Consume(w, r, 0, s.want, func() { s.arrived <- struct{}{} })
}

// settled returns the wait after each stalled upload opens: until its
// bytes are all at the upstream (its follower has read them, so a yield
// would free its full chunks), and its filler waits in a source Read with
// its next chunk taken, for 60 s at most in all. So the uploads open one
// after another, and the budget is in the same state in both arms when the
// writes start: the first uploads hold what they read and their next
// chunk, the last ones found the budget spent and lost their replay
// (ReasonNoBudget), with no yield, as none frees the rest of their body.
func (s *yieldStack) settled() func(open int) error {
	timeout := time.After(60 * time.Second)
	return func(open int) error {
		for range 2 {
			select {
			case <-s.arrived:
			case <-s.waiting:
			case <-timeout:
				return fmt.Errorf("%d stalled uploads have not settled; stats %+v", open, s.Transport.Stats())
			}
		}
		return nil
	}
}

// writes sends n writes (Stack.Writes), waits until the front has counted
// each, and returns how many got 429 and how many failed otherwise. A write
// that failed in the client may never have reached the front: then the wait
// fails the benchmark.
func (s *yieldStack) writes(b *testing.B, n int) (retryLater, failed int64) {
	s.wrote.Add(n)
	retryLater, failed = s.Writes(n, yieldPayload())
	counted := make(chan struct{})
	go func() {
		s.wrote.Wait() // each write's Tee is counted: its handler has returned
		close(counted)
	}()
	timeout := time.NewTimer(60 * time.Second)
	defer timeout.Stop()
	select {
	case <-counted:
	case <-timeout.C:
		b.Fatalf("the front has not counted every write; %d failed in the client", failed)
	}
	return retryLater, failed
}

// yieldPayload is the bytes every body is cut from.
var yieldPayload = sync.OnceValue(func() []byte {
	return bytes.Repeat([]byte("teebody yield policy "), (4<<20)/21+1)
})

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
