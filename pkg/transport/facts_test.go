package transport_test

// Regression tests for the facts of Go's transports that the design relies
// on (docs/design.md, facts), against the real transports and a real GOAWAY.
// If a Go release changes one of them, the test that fails says which
// assumption to revisit.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// trackedBody is a GetBody result that records whether it was ever read
// or closed.
type trackedBody struct {
	io.Reader
	read, closed atomic.Bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.Reader.Read(p)
}

func (b *trackedBody) Close() error {
	b.closed.Store(true)
	return nil
}

// factRun sends a batch of POSTs with rt to u, a refusingUpstream, each
// with a GetBody made by getBody (none if nil), and returns the errors
// RoundTrip returned. The first POST goes alone, so that rt dials one
// connection for it, the upstream's first, which refuses it: it needs a
// replay on every run. (Sent together, the first POSTs would make rt dial
// several connections at once and use whichever is ready first.) The others
// then go 16 at a time, and meet the refusing connections that follow.
func factRun(t *testing.T, rt http.RoundTripper, u *upstream, getBody func(b testBody) func() (io.ReadCloser, error)) []error {
	t.Helper()
	var (
		mu   sync.Mutex
		errs []error
	)
	bodies := uniformBodies(300, 200, 1, 256<<10)
	send := func(i int) {
		req := newPost(context.Background(), u.srv.URL, bodies[i], "")
		if getBody != nil {
			req.GetBody = getBody(bodies[i])
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	send(0)
	proxytest.Each(len(bodies)-1, 16, func(i int) { send(i + 1) })
	return errs
}

// Fact 2: through net/http's transport, GetBody is called several times for
// one RoundTrip, and some of its results are never read and never closed.
func TestFactGetBodyCalledSeveralTimes(t *testing.T) {
	u := refusingUpstream(t) // its refusing connections make requests need a replay, every run
	var (
		mu       sync.Mutex
		maxCalls int            // guarded by mu
		all      []*trackedBody // guarded by mu: every GetBody result, checked at the end
	)
	getBody := func(b testBody) func() (io.ReadCloser, error) {
		calls := 0
		return func() (io.ReadCloser, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			maxCalls = max(maxCalls, calls)
			tb := &trackedBody{Reader: bytes.NewReader(b.data)}
			all = append(all, tb)
			return tb, nil
		}
	}
	errs := factRun(t, transportTo(t, u.srv), u, getBody)
	mu.Lock()
	defer mu.Unlock()
	n := abandoned(all)
	t.Logf("GetBody results: %d, never read nor closed: %d; most calls in one RoundTrip: %d; errors: %d", len(all), n, maxCalls, len(errs))
	if maxCalls < 2 {
		t.Errorf("GetBody was called at most %d times per RoundTrip; fact 2 says several", maxCalls)
	}
	if n == 0 {
		t.Error("every GetBody result was read or closed; fact 2 says some are abandoned")
	}
}

// h2Inner is one of the two HTTP/2 client transports that facts 1 and 5 are
// about, made for an upstream.
type h2Inner struct {
	name string
	rt   func(*upstream) http.RoundTripper
}

// h2Inners returns net/http's transport and golang.org/x/net/http2's; each
// one made closes its idle connections at the end of t's test.
func h2Inners(t testing.TB) []h2Inner {
	return []h2Inner{
		{"net/http", func(u *upstream) http.RoundTripper { return transportTo(t, u.srv) }},
		{"x/net/http2", func(u *upstream) http.RoundTripper { return xh2Transport(t, u) }},
	}
}

// Fact 1: the HTTP/2 transports return GetBody's error unwrapped, so that
// errors.Is works on what RoundTrip returns.
func TestFactGetBodyErrorUnwrapped(t *testing.T) {
	sentinel := errors.New("test: no replay")
	for _, inner := range h2Inners(t) {
		t.Run(inner.name, func(t *testing.T) {
			u := refusingUpstream(t) // its first connection needs a replay of every request
			errs := factRun(t, inner.rt(u), u, func(testBody) func() (io.ReadCloser, error) {
				return func() (io.ReadCloser, error) { return nil, sentinel }
			})
			if len(errs) == 0 {
				t.Fatal("no request needed a replay")
			}
			for _, err := range errs {
				if err != sentinel {
					t.Errorf("RoundTrip error %q (%T), want GetBody's error itself", err, err)
				}
			}
		})
	}
}

// Fact 1: without GetBody, the HTTP/2 transport fails with a string error
// that nothing can match with errors.Is or errors.As; net/http's transport
// also fails with "cannot rewind body after connection loss" (fact 5).
// ShouldRetryLater recognises both by their text.
func TestFactNoGetBodyStringError(t *testing.T) {
	for _, inner := range h2Inners(t) {
		t.Run(inner.name, func(t *testing.T) {
			u := refusingUpstream(t) // its first connection needs a replay of every request
			errs := factRun(t, inner.rt(u), u, nil)
			if len(errs) == 0 {
				t.Fatal("no request failed")
			}
			kinds := map[string]int{}
			for _, err := range errs {
				kinds[errClass(err)]++
				if !strings.Contains(err.Error(), "define Request.GetBody") && !strings.Contains(err.Error(), "cannot rewind body") {
					t.Errorf("unexpected error %q", err)
					continue
				}
				if errors.Unwrap(err) != nil {
					t.Errorf("error %q wraps %v: the fact says a plain string", err, errors.Unwrap(err))
				}
				var nre teebody.NotReplayableError
				if errors.Is(err, teebody.ErrNotReplayable) || errors.As(err, &nre) {
					t.Errorf("error %q matches teebody's errors", err)
				}
				if !transport.ShouldRetryLater(err) {
					t.Errorf("ShouldRetryLater(%q) = false", err)
				}
			}
			t.Logf("errors without GetBody: %v", kinds)
		})
	}
}

// Fact 6: httputil.ReverseProxy never sets GetBody on the request it hands
// its Transport.
func TestFactReverseProxyNeverSetsGetBody(t *testing.T) {
	u := newUpstream(t, true, 0)
	rec := &recorder{rt: transportTo(t, u.srv)}
	f := newFront(t, false, newProxy(u, rec, nil, nil))
	bodies := uniformBodies(5, 20, 1, 64<<10)
	if r := runLoad(context.Background(), f.client(t), f.srv.URL, bodies, 4); r.failed != 0 {
		t.Fatal(r)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) != len(bodies) {
		t.Fatalf("%d requests reached the transport, want %d", len(rec.reqs), len(bodies))
	}
	for _, req := range rec.reqs {
		if req.Body == nil || req.GetBody != nil {
			t.Errorf("ReverseProxy handed on Body %v, GetBody set %v; want a body without GetBody", req.Body, req.GetBody != nil)
		}
	}
}
