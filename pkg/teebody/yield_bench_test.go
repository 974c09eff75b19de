package teebody_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/internal/rusage"
	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
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
	const (
		uploads = 12
		length  = 5 << 20 // what each upload announces
		sent    = 4 << 20 // what it sends before it stalls
	)
	cfg := transport.DefaultConfig()
	cfg.TotalBytes, cfg.PerRequestBytes = 50<<20, 5<<20
	s := newYieldStack(b, cfg, yield, sent)
	closeAll := s.stall(b, uploads, length, sent)
	defer closeAll()

	before := s.tr.Stats()
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
	if got := s.tr.Stats().Yields - before.Yields; !yield && got != 0 {
		b.Fatalf("yield=off: %d bodies yielded", got)
	}
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	b.ReportMetric(float64(before.BudgetBytes-before.BytesHeld)/(1<<10), "KiB-free-at-start")
	b.ReportMetric(float64(s.lost.Load()), "lost-replays")
	b.ReportMetric(float64(retryLater), "429s")
	b.ReportMetric(float64(failed), "failed")
	b.ReportMetric(float64(s.tr.Stats().Yields-before.Yields), "yields")
}

// hdrStall marks the uploads that stall, for the front and the upstream.
const hdrStall = "X-Stall"

// yieldStack is BenchmarkNoisy's stack: a client-facing HTTP/1.1
// ReverseProxy over transport.New to an HTTP/2 upstream that ends 5% of its
// connections after a response. The inner RoundTripper marks each Tee with
// AskNoYield when yields are off, and hands the Tee of each write to the
// front, which counts it among the lost replays if its replay ended before
// its answer.
type yieldStack struct {
	up      *proxytest.Server
	tr      *transport.Transport
	front   *httptest.Server
	client  *http.Client
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

func newYieldStack(b *testing.B, cfg transport.Config, yield bool, want int64) *yieldStack {
	s := &yieldStack{arrived: make(chan struct{}, 64), waiting: make(chan struct{}, 64), want: want}
	// Room in the connection's window for every stream's window, as in
	// BenchmarkNoisy: what is measured is our side.
	h2 := &http.HTTP2Config{MaxReceiveBufferPerConnection: 64 << 20}
	s.up = proxytest.NewServer(http.HandlerFunc(s.serve), proxytest.Options{Chance: 0.05, HTTP2: h2})
	inner := s.up.Transport()
	cfg.ErrorLog = proxytest.QuietLog()
	s.tr = transport.New(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if tee := teebody.TeeOf(r.Body); tee != nil {
			if !yield {
				tee.AskNoYield() // before the filler starts: the inner transport has not read yet
				s.marked.Add(1)
			}
			if r.Header.Get(hdrStall) != "" {
				sent := false
				tee.OnSourceRead(func(read int64) {
					if read >= want && !sent {
						sent = true
						s.waiting <- struct{}{}
					}
				})
			}
			if slot, ok := r.Context().Value(teeKey{}).(*atomic.Pointer[teebody.Tee]); ok {
				slot.Store(tee)
			}
		}
		return inner.RoundTrip(r)
	}), cfg)
	target, err := url.Parse(s.up.URL)
	if err != nil {
		b.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite:      func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:    s.tr,
		ErrorHandler: s.tr.ErrorHandler,
		ErrorLog:     proxytest.QuietLog(),
	}
	s.front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(hdrStall) != "" {
			rp.ServeHTTP(w, r)
			return
		}
		defer s.wrote.Done()
		var slot atomic.Pointer[teebody.Tee]
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), teeKey{}, &slot)))
		if tee := slot.Load(); tee != nil {
			// The Tee is closed: its reason is ReasonClosed, unless the
			// answer sealed it first (ReasonStreamedPast) or its replay
			// had ended before.
			nre, _ := errors.AsType[teebody.NotReplayableError](tee.ReplayErr())
			if r := nre.Reason(); r == teebody.ReasonNoBudget || r == teebody.ReasonYielded {
				s.lost.Add(1)
			}
		}
	}))
	s.front.Config.ErrorLog = proxytest.QuietLog()
	s.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	b.Cleanup(func() {
		s.client.CloseIdleConnections()
		s.front.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.tr.Drain(ctx); err != nil {
			b.Errorf("drain: %v; stats %+v", err, s.tr.Stats())
		}
		inner.CloseIdleConnections()
		s.up.Close()
	})
	return s
}

// serve is the upstream: it reads the body whole, and once want bytes of a
// stalled upload are in it counts as arrived. It answers 200 when the
// body's length matches its Content-Length.
func (s *yieldStack) serve(w http.ResponseWriter, r *http.Request) {
	stalled := r.Header.Get(hdrStall) != ""
	buf := make([]byte, 32<<10)
	var n int64
	for {
		m, err := r.Body.Read(buf)
		n += int64(m)
		if stalled && n >= s.want {
			stalled = false
			s.arrived <- struct{}{}
		}
		if err != nil {
			break
		}
	}
	if n != r.ContentLength {
		http.Error(w, "short body", http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// stall opens n connections to the front, one after another, that each
// send headers announcing length bytes, then sent bytes of the body, and
// stall. It opens the next once the last has settled: its bytes are all at
// the upstream (its follower has read them, so a yield would free its full
// chunks), and its filler waits in a source Read with its next chunk taken.
// So the budget is in the same state in both arms when the writes start: the
// first uploads hold what they read and their next chunk, the last ones
// found the budget spent and lost their replay (ReasonNoBudget), with no
// yield, as none frees the rest of their body. The returned function closes
// the connections.
func (s *yieldStack) stall(b *testing.B, n int, length, sent int64) (closeAll func()) {
	addr := s.front.Listener.Addr().String()
	head := "POST / HTTP/1.1\r\nHost: " + addr + "\r\n" + hdrStall + ": 1\r\nContent-Length: " +
		strconv.FormatInt(length, 10) + "\r\n\r\n"
	conns := make([]net.Conn, 0, n)
	closeAll = func() {
		for _, c := range conns {
			c.Close()
		}
	}
	timeout := time.NewTimer(60 * time.Second)
	defer timeout.Stop()
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			closeAll()
			b.Fatal(err)
		}
		conns = append(conns, c)
		go func() { // writes block once the transport stops reading: ours to end by closing c
			if _, err := io.WriteString(c, head); err == nil {
				_, _ = c.Write(yieldPayload()[:sent])
			}
		}()
		for range 2 {
			select {
			case <-s.arrived:
			case <-s.waiting:
			case <-timeout.C:
				closeAll()
				b.Fatalf("%d stalled uploads have not settled; stats %+v", len(conns), s.tr.Stats())
			}
		}
	}
	return closeAll
}

// writes sends n POSTs of 1 to 64 KiB (BenchmarkNoisy's sizes) from 32
// clients, waits until the front has counted each, and returns how many got
// 429 and how many failed otherwise. A write that failed in the client may
// never have reached the front: then the wait fails the benchmark.
func (s *yieldStack) writes(b *testing.B, n int) (retryLater, failed int64) {
	rng := rand.New(rand.NewPCG(16, 3000))
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = 1<<10 + rng.IntN(63<<10+1)
	}
	s.wrote.Add(n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				req, err := http.NewRequest(http.MethodPost, s.front.URL, bytes.NewReader(yieldPayload()[:sizes[i]]))
				if err != nil {
					panic(err)
				}
				resp, err := s.client.Do(req)
				switch {
				case err != nil:
					atomic.AddInt64(&failed, 1)
				case resp.StatusCode == http.StatusTooManyRequests:
					atomic.AddInt64(&retryLater, 1)
				case resp.StatusCode != http.StatusOK:
					atomic.AddInt64(&failed, 1)
				}
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		})
	}
	wg.Wait()
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
