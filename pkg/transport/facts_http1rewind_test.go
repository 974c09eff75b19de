package transport_test

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

// replayableRequests are the requests with a body that net/http's HTTP/1
// transport takes for replayable when GetBody is set (Request.isReplayable):
// it sends them again after writing them.
var replayableRequests = []struct {
	name, method, header string
}{
	{"Idempotency-Key", http.MethodPost, "Idempotency-Key"},
	{"X-Idempotency-Key", http.MethodPost, "X-Idempotency-Key"},
	{"GET with a body", http.MethodGet, ""},
	{"HEAD with a body", http.MethodHead, ""},
	{"OPTIONS with a body", http.MethodOptions, ""},
	{"TRACE with a body", http.MethodTrace, ""},
}

// newRequest returns a request of method to target with body, header (if
// not empty) set, and a GetBody that counts its calls, if getBodies is not
// nil; without it, the request has no GetBody.
func newRequest(t *testing.T, method, target, header string, body []byte, getBodies *atomic.Int64) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, target, hiddenReader{bytes.NewReader(body)})
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	if header != "" {
		req.Header.Set(header, "key-1")
	}
	if getBodies != nil {
		req.GetBody = func() (io.ReadCloser, error) {
			getBodies.Add(1)
			return io.NopCloser(bytes.NewReader(body)), nil
		}
	}
	return req
}

// wireEvents records the httptrace hooks that tell what an attempt wrote,
// and at each GetBody call what the current attempt had done.
type wireEvents struct {
	mu     sync.Mutex
	events []string // guarded by mu
}

func (e *wireEvents) add(ev string) {
	e.mu.Lock()
	e.events = append(e.events, ev)
	e.mu.Unlock()
}

func (e *wireEvents) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.events, ", ")
}

// trace returns hooks that record in e: GotConn with the connection's
// protocol ("h2" or "other") and whether it was reused, and WroteHeaders.
func (e *wireEvents) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			proto := "other"
			if tc, ok := info.Conn.(*tls.Conn); ok && tc.ConnectionState().NegotiatedProtocol == "h2" {
				proto = "h2"
			}
			if info.Reused {
				proto += " reused"
			}
			e.add("GotConn " + proto)
		},
		WroteHeaders: func() { e.add("WroteHeaders") },
	}
}

// Fact 5: net/http's HTTP/1 transport sends a replayable request again,
// rewinding it through GetBody, after a reused connection failed before
// the response's first byte, though the whole request was written and the
// upstream applied it. Before that GetBody call, httptrace told of the
// attempt: GotConn, with a connection that did not negotiate HTTP/2 and
// was reused, then WroteHeaders. Without GetBody the same request is not
// sent again, and neither is a POST without an Idempotency-Key: the
// upstream applies each once.
func TestFactHTTP1ResendsWrittenReplayable(t *testing.T) {
	body := bytes.Repeat([]byte("w"), 32<<10)
	for _, rr := range replayableRequests {
		t.Run(rr.name, func(t *testing.T) {
			u := proxytest.NewDropper(t)
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			u.WarmUp(t, tr)
			var getBodies atomic.Int64
			req := newRequest(t, rr.method, u.URL, rr.header, body, &getBodies)
			var ev wireEvents
			trace := ev.trace()
			getBody := req.GetBody
			req.GetBody = func() (io.ReadCloser, error) { ev.add("GetBody"); return getBody() }
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip: %v; want net/http to send the request again", err)
			}
			resp.Body.Close()
			if n, calls := u.Applied(), getBodies.Load(); n != 2 || calls != 1 {
				t.Errorf("applied %d times, %d GetBody calls; want twice and one", n, calls)
			}
			want := "GotConn other reused, WroteHeaders, GetBody, GotConn other, WroteHeaders"
			if got := ev.String(); got != want {
				t.Errorf("events: %s; want %s", got, want)
			}
		})
	}
	for _, tc := range []struct {
		name, header string
		getBody      bool
	}{
		{"POST with GetBody", "", true},
		{"Idempotency-Key without GetBody", "Idempotency-Key", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := proxytest.NewDropper(t)
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			u.WarmUp(t, tr)
			var getBodies atomic.Int64
			counter := &getBodies
			if !tc.getBody {
				counter = nil
			}
			resp, err := tr.RoundTrip(newRequest(t, http.MethodPost, u.URL, tc.header, body, counter))
			if err == nil {
				resp.Body.Close()
				t.Fatal("RoundTrip succeeded; want the dropped connection's error")
			}
			if n, calls := u.Applied(), getBodies.Load(); n != 1 || calls != 0 {
				t.Errorf("applied %d times, %d GetBody calls; want once and none", n, calls)
			}
		})
	}
}

// net/http's HTTP/2 transport over TLS names, in GotConn, a *tls.Conn that
// negotiated "h2": the Transport tells HTTP/2 from HTTP/1 by it. A GOAWAY's
// replay of a replayable request comes after GotConn and WroteHeaders, as
// an HTTP/1 rewind does.
func TestFactH2GotConnNegotiatedH2(t *testing.T) {
	u := refusingUpstream(t) // its first connection refuses the first request
	rt := transportTo(t, u.srv)
	var ev wireEvents
	req := newRequest(t, http.MethodPost, u.srv.URL, "Idempotency-Key", []byte("write"), new(atomic.Int64))
	getBody := req.GetBody
	req.GetBody = func() (io.ReadCloser, error) { ev.add("GetBody"); return getBody() }
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), ev.trace()))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	resp.Body.Close()
	got := ev.String()
	if !strings.HasPrefix(got, "GotConn h2, WroteHeaders, GetBody") || strings.Contains(got, "other") {
		t.Errorf("events: %s; want GotConn h2, WroteHeaders, GetBody first, and no connection but h2", got)
	}
}

// net/http's HTTP/2 without TLS (h2c, Protocols with UnencryptedHTTP2
// alone) names, in GotConn, the connection it dialed: nothing in it tells
// HTTP/2 from HTTP/1, so the Transport takes it for HTTP/1.
func TestFactH2CGotConnPlain(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			t.Errorf("the upstream got HTTP/%d, want HTTP/2", r.ProtoMajor)
		}
		io.Copy(io.Discard, r.Body)
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	var conn net.Conn
	req := newRequest(t, http.MethodPost, srv.URL, "Idempotency-Key", []byte("write"), nil)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { conn = info.Conn },
	}))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("HTTP/%d, want HTTP/2", resp.ProtoMajor)
	}
	if _, ok := conn.(*net.TCPConn); !ok {
		t.Errorf("GotConn named a %T, want the *net.TCPConn dialed", conn)
	}
}
