package transport_test

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// TestWrittenReplayableNotResent: a replayable request (an Idempotency-Key,
// or a GET with a body) that net/http's HTTP/1 transport wrote whole on a
// reused connection, which the upstream dropped after it applied the
// request, is applied once through the Transport, as through a transport
// without GetBody, and its error is no proof: whether its body was kept
// (it would be resent) or not (a 429 for an applied write). The withheld
// replay shows in Stats, the BodyTrace and the Report.
func TestWrittenReplayableNotResent(t *testing.T) {
	const limit = 16 << 10
	for _, rr := range replayableRequests {
		for _, size := range []int{limit / 2, 4 * limit} {
			name := rr.name + "/kept"
			if size > limit {
				name = rr.name + "/not kept"
			}
			t.Run(name, func(t *testing.T) {
				u := proxytest.NewDropper(t)
				inner := &http.Transport{}
				defer inner.CloseIdleConnections()
				cfg := quietConfig()
				cfg.PerRequestBytes = limit
				tr := transport.New(inner, cfg)
				u.WarmUp(t, tr)
				req := newRequest(t, rr.method, u.URL, rr.header, bytes.Repeat([]byte("w"), size), nil)
				var withheld atomic.Int32
				var report transport.Report
				ctx := transport.WithBodyTrace(req.Context(), &transport.BodyTrace{
					ReplayWithheld: func() { withheld.Add(1) },
					ReplayRefused:  func(r teebody.Reason) { t.Errorf("ReplayRefused(%v); want ReplayWithheld", r) },
				})
				req = req.WithContext(transport.WithReport(ctx, &report))
				resp, err := tr.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
					t.Errorf("RoundTrip succeeded; want the dropped connection's failure")
				} else if transport.ShouldRetryLater(err) || errors.Is(err, teebody.ErrNotReplayable) {
					t.Errorf("RoundTrip: %v; ShouldRetryLater holds, want no proof", err)
				}
				if n := u.Applied(); n != 1 {
					t.Errorf("the upstream applied the request %d times, want once", n)
				}
				drain(t, tr)
				st := tr.Stats()
				if st.ReplaysServed != 0 || st.ReplaysWithheld != 1 || st.ReplaysRefused != (transport.RefusalStats{}) {
					t.Errorf("ReplaysServed %d, ReplaysWithheld %d, ReplaysRefused %+v; want 0, 1, none",
						st.ReplaysServed, st.ReplaysWithheld, st.ReplaysRefused)
				}
				if n := withheld.Load(); n != 1 || !report.Withheld {
					t.Errorf("ReplayWithheld called %d times, Report.Withheld %v; want once, true", n, report.Withheld)
				}
			})
		}
	}
}

// TestWrittenReplayableNot429: through httputil.ReverseProxy and
// ErrorHandler, a write with an Idempotency-Key that the upstream applied
// before it dropped a reused HTTP/1 connection gets 502, as through the
// plain transport, never 429, though its body was not kept.
func TestWrittenReplayableNot429(t *testing.T) {
	u := proxytest.NewDropper(t)
	inner := &http.Transport{}
	defer inner.CloseIdleConnections()
	cfg := quietConfig()
	cfg.PerRequestBytes = 4 << 10
	tr := transport.New(inner, cfg)
	target, _ := url.Parse(u.URL)
	f := proxyFront(t, target, tr, tr.ErrorHandler)
	for i, body := range []string{"", strings.Repeat("w", 64<<10)} { // a warm-up, then the write
		req, err := http.NewRequest(http.MethodPost, f.url, io.MultiReader(strings.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Idempotency-Key", "key-1")
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if want := []int{http.StatusOK, http.StatusBadGateway}[i]; resp.StatusCode != want {
			t.Errorf("request %d: status %d, want %d", i, resp.StatusCode, want)
		}
	}
	if n := u.Applied(); n != 1 {
		t.Errorf("the upstream applied the write %d times, want once", n)
	}
	if st := tr.Stats(); st.RetryLaterWritten != 0 {
		t.Errorf("RetryLaterWritten = %d, want 0", st.RetryLaterWritten)
	}
}

// TestIdempotencyKeyGOAWAYReplayed: over HTTP/2 with TLS, a GOAWAY's
// refusal of a request with an Idempotency-Key is a proof, and its replay
// is served: the Transport tells the connection from an HTTP/1 one.
func TestIdempotencyKeyGOAWAYReplayed(t *testing.T) {
	u := refusingUpstream(t) // its first connection refuses the first request
	tr := transport.New(transportTo(t, u.srv), quietConfig())
	b := uniformBodies(7, 1, 32<<10, 32<<10)[0]
	req := newPost(t.Context(), u.srv.URL, b, "write-1")
	req.Header.Set("Idempotency-Key", "key-1")
	if got := do(tr, req); got != "" {
		t.Fatalf("the request failed: %s", got)
	}
	drain(t, tr)
	if st := tr.Stats(); st.ReplaysServed == 0 {
		t.Errorf("no replay served: %+v", st)
	}
	if n := u.appliedCounts()["write-1"]; n != 1 {
		t.Errorf("the upstream applied the write %d times, want once", n)
	}
}

// alpnConn is a connection that negotiated proto, as a *tls.Conn says.
type alpnConn struct {
	net.Conn
	proto string
}

func (c alpnConn) ConnectionState() tls.ConnectionState {
	return tls.ConnectionState{NegotiatedProtocol: c.proto}
}

// fakeConn has the shape of quic-go's *http3.fakeConn, the connection its
// HTTP/3 transport names in GotConn (quicshape_export_test.go points the
// library at this package for it).
type fakeConn struct{ net.Conn }

// hookStep is what scriptedRT does before it calls GetBody: a GotConn with
// conn, or, with a nil conn, a WroteHeaders.
type hookStep struct{ conn net.Conn }

var wroteHeaders = hookStep{}

// scriptedRT is an inner RoundTripper that calls the request's httptrace
// hooks as its steps say, then GetBody once, reads what it gives, and
// answers an empty 200.
type scriptedRT struct {
	steps      []hookStep
	getBodyErr error
	replayed   []byte
}

func (s *scriptedRT) RoundTrip(req *http.Request) (*http.Response, error) {
	trace := httptrace.ContextClientTrace(req.Context())
	for _, st := range s.steps {
		switch {
		case trace == nil:
		case st.conn != nil && trace.GotConn != nil:
			trace.GotConn(httptrace.GotConnInfo{Conn: st.conn, Reused: true})
		case st.conn == nil && trace.WroteHeaders != nil:
			trace.WroteHeaders()
		}
	}
	io.Copy(io.Discard, req.Body)
	req.Body.Close()
	body, err := req.GetBody()
	if s.getBodyErr = err; err == nil {
		s.replayed, _ = io.ReadAll(body)
		body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req, Header: http.Header{}}, nil
}

// TestGetBodyAfterWriteOnProofAlone: GetBody refuses, with an error that is
// no proof, exactly the calls that net/http's HTTP/1 transport may make
// for a request the upstream processed: a replayable request whose
// current attempt wrote its headers on a connection that may speak HTTP/1.
// It serves the others.
func TestGetBodyAfterWriteOnProofAlone(t *testing.T) {
	plain, _ := net.Pipe()
	h1 := hookStep{plain}
	tlsH1 := hookStep{alpnConn{plain, "http/1.1"}}
	h2 := hookStep{alpnConn{plain, "h2"}}
	h3 := hookStep{&fakeConn{plain}}
	for _, tc := range []struct {
		name, method, header string
		steps                []hookStep
		refused              bool
	}{
		{"Idempotency-Key after a write over HTTP/1", http.MethodPost, "Idempotency-Key", []hookStep{h1, wroteHeaders}, true},
		{"X-Idempotency-Key after a write over HTTP/1", http.MethodPost, "X-Idempotency-Key", []hookStep{h1, wroteHeaders}, true},
		{"GET after a write over HTTP/1", http.MethodGet, "", []hookStep{h1, wroteHeaders}, true},
		{"Idempotency-Key after a write over TLS HTTP/1", http.MethodPost, "Idempotency-Key", []hookStep{tlsH1, wroteHeaders}, true},
		{"a second attempt's write over HTTP/1", http.MethodPost, "Idempotency-Key", []hookStep{h2, wroteHeaders, h1, wroteHeaders}, true},
		{"POST after a write over HTTP/1", http.MethodPost, "", []hookStep{h1, wroteHeaders}, false},
		{"PUT after a write over HTTP/1", http.MethodPut, "", []hookStep{h1, wroteHeaders}, false},
		{"Idempotency-Key before its headers were written", http.MethodPost, "Idempotency-Key", []hookStep{h1}, false},
		{"Idempotency-Key on a new connection", http.MethodPost, "Idempotency-Key", []hookStep{h1, wroteHeaders, h1}, false},
		{"Idempotency-Key after a write over HTTP/2", http.MethodPost, "Idempotency-Key", []hookStep{h2, wroteHeaders}, false},
		{"Idempotency-Key after a write over HTTP/3", http.MethodPost, "Idempotency-Key", []hookStep{h3, wroteHeaders}, false},
		{"Idempotency-Key without GotConn", http.MethodPost, "Idempotency-Key", []hookStep{wroteHeaders}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &scriptedRT{steps: tc.steps}
			tr := transport.New(inner, transport.DefaultConfig())
			req := newRequest(t, tc.method, "http://upstream.invalid/", tc.header, []byte("write"), nil)
			var userHooks atomic.Int64 // a trace of the caller's own still sees every hook
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
				GotConn:      func(httptrace.GotConnInfo) { userHooks.Add(1) },
				WroteHeaders: func() { userHooks.Add(1) },
			}))
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			resp.Body.Close()
			drain(t, tr)
			if n := userHooks.Load(); n != int64(len(tc.steps)) {
				t.Errorf("the caller's hooks ran %d times, want %d", n, len(tc.steps))
			}
			err = inner.getBodyErr
			if !tc.refused {
				if err != nil || string(inner.replayed) != "write" {
					t.Errorf("GetBody: %q, %v; want the body", inner.replayed, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("GetBody served %q; want a refusal", inner.replayed)
			}
			if transport.ShouldRetryLater(err) || errors.Is(err, teebody.ErrNotReplayable) {
				t.Errorf("GetBody: %v; a proof, want none", err)
			}
		})
	}
}
