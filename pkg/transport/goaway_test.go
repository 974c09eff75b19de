package transport_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// The GOAWAY injector's rate: one response in goawayEvery ends its
// connection. Far above the API server's 2% so that a short run shows many
// GOAWAYs; the fix must hold at any rate.
const goawayEvery = 20

// requestCount is the size of a fixed run: thousands by default, fewer
// with -short. Every assertion holds either way.
func requestCount(full int) int {
	if testing.Short() {
		return full / 4
	}
	return full
}

// quietConfig is DefaultConfig logging nowhere.
func quietConfig() transport.Config {
	cfg := transport.DefaultConfig()
	cfg.ErrorLog = proxytest.QuietLog()
	return cfg
}

// drain waits until tr released every body and checks nothing is held.
func drain(t *testing.T, tr *transport.Transport) {
	t.Helper()
	if err := tr.Drain(t.Context()); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	if st := tr.Stats(); st.BytesHeld != 0 {
		t.Errorf("BytesHeld after Drain = %d, want 0", st.BytesHeld)
	}
}

// TestReverseProxyGOAWAY is the failure and the fix side by side: the same
// POSTs through an httputil.ReverseProxy to an upstream that sends graceful
// GOAWAYs fail without the transport and never with it.
func TestReverseProxyGOAWAY(t *testing.T) {
	for _, proxyKind := range []string{"ReverseProxy", "hand-written"} {
		t.Run(proxyKind, func(t *testing.T) {
			newHandler := func(u *upstream, rt http.RoundTripper, eh func(http.ResponseWriter, *http.Request, error), lc *logCounter) http.Handler {
				if proxyKind == "ReverseProxy" {
					return newProxy(u, rt, eh, lc)
				}
				if eh == nil {
					eh = func(w http.ResponseWriter, r *http.Request, err error) {
						lc.Write([]byte("http: proxy error: " + err.Error()))
						w.WriteHeader(http.StatusBadGateway)
					}
				}
				return newHandProxy(u, rt, eh)
			}

			// Without the transport: the upstream's first connection refuses
			// its requests, so some fail every time.
			u := refusingUpstream(t)
			lc := &logCounter{}
			f := newFront(t, false, newHandler(u, transportTo(t, u.srv), nil, lc))
			client := f.client(t)
			broken := runLoad(context.Background(), client, f.srv.URL, randomBodies(100, requestCount(400), 2<<20), 16)
			goawayErrs := lc.count("GetBody") + lc.count("cannot rewind")
			t.Logf("without the transport: %v; proxy errors naming GOAWAY or rewind: %d; wrong bytes upstream: %d",
				broken, goawayErrs, u.wrong.Load())
			if broken.failed == 0 || goawayErrs == 0 {
				t.Errorf("%d failed, %d GOAWAY errors in the proxy's log, want both > 0; lines: %v", broken.failed, goawayErrs, lc.lines)
			}

			// With the transport.
			u = refusingUpstream(t)
			tr := transport.New(transportTo(t, u.srv), quietConfig())
			f = newFront(t, false, newHandler(u, tr, tr.ErrorHandler, nil))
			client = f.client(t)
			// 600 POSTs meet about fifteen refusing connections (one in
			// two, each after goawayEvery responses): many replays, every
			// run, in both kinds of proxy.
			bodies := randomBodies(7, requestCount(600), 2<<20)
			stopScraping := scrapeStats(t, tr)
			fixed := runLoad(context.Background(), client, f.srv.URL, bodies, 16)
			stopScraping()
			drain(t, tr)
			st := tr.Stats()
			t.Logf("with the transport: %v; wrong bytes upstream: %d; GOAWAYs sent: %d; stats %+v",
				fixed, u.wrong.Load(), u.srv.Goaways(), st)
			if fixed.failed != 0 {
				t.Errorf("%d requests failed with the transport: %v", fixed.failed, fixed.errs)
			}
			if n := u.wrong.Load(); n != 0 {
				t.Errorf("%d bodies arrived with wrong bytes", n)
			}
			if u.srv.Goaways() == 0 || st.ReplaysServed == 0 {
				t.Errorf("GOAWAYs %d, replays served %d: the run did not exercise a replay", u.srv.Goaways(), st.ReplaysServed)
			}
			f.checkLate(t)
		})
	}
}

// TestTransportGOAWAY runs the fixed half of the same load through the
// transport used as a client's RoundTripper, over net/http's transport
// (bundled HTTP/2, where GetBody is called several times per request and
// some results are abandoned: docs/design.md, fact 2) and over
// golang.org/x/net/http2's. What those fail with without it is
// TestFactNoGetBodyStringError's.
func TestTransportGOAWAY(t *testing.T) {
	for _, inner := range h2Inners(t) {
		t.Run(inner.name, func(t *testing.T) {
			u := refusingUpstream(t) // every second connection needs a replay
			tr := transport.New(inner.rt(u), quietConfig())
			fixed := runLoad(context.Background(), tr, u.srv.URL, randomBodies(8, requestCount(600), 2<<20), 16)
			drain(t, tr)
			st := tr.Stats()
			t.Logf("with the transport: %v; wrong bytes upstream: %d; GOAWAYs sent: %d; stats %+v",
				fixed, u.wrong.Load(), u.srv.Goaways(), st)
			if fixed.failed != 0 || u.wrong.Load() != 0 {
				t.Errorf("with the transport: %d failed (%v), %d with wrong bytes", fixed.failed, fixed.errs, u.wrong.Load())
			}
			if st.ReplaysServed == 0 {
				t.Error("no replay served: the run did not exercise the fix")
			}
		})
	}
}

// scrapeStats reads tr's Stats every millisecond, as a metrics scraper would, so
// that the race detector sees Stats concurrent with RoundTrip, until the
// returned function is called; that function fails t if a counter went
// backwards.
func scrapeStats(t *testing.T, tr *transport.Transport) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	var backwards string // written by the goroutine, read after exited
	go func() {
		defer close(exited)
		var last transport.Stats
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			st := tr.Stats()
			if st.Requests < last.Requests || st.PeakBytesHeld < last.PeakBytesHeld {
				backwards = fmt.Sprintf("Stats went backwards: %+v after %+v", st, last)
				return
			}
			last = st
		}
	}()
	return func() {
		t.Helper()
		close(done)
		<-exited
		if backwards != "" {
			t.Error(backwards)
		}
	}
}
