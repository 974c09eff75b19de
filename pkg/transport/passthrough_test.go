package transport_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// recorder is an http.RoundTripper in front of a real transport that keeps
// the requests it is handed, to see what the Transport passes on.
type recorder struct {
	rt   http.RoundTripper
	mu   sync.Mutex
	reqs []*http.Request // guarded by mu
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.rt.RoundTrip(req)
}

func (r *recorder) last() *http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs[len(r.reqs)-1]
}

// echo is an HTTP/1.1 upstream that answers with the body it received.
func newEcho(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPassThrough(t *testing.T) {
	srv := newEcho(t)
	disabled := transport.Config{Disabled: true}
	noTotal := transport.Config{TotalBytes: -1}
	noPerReq := transport.Config{PerRequestBytes: -1}
	cases := []struct {
		name   string
		cfg    transport.Config
		setup  func(*http.Request)
		reason func(transport.PassThroughStats) int64
	}{
		{"nil body", transport.DefaultConfig(), func(r *http.Request) { r.Body = nil; r.ContentLength = 0 },
			func(s transport.PassThroughStats) int64 { return s.NoBody }},
		{"NoBody", transport.DefaultConfig(), func(r *http.Request) { r.Body = http.NoBody; r.ContentLength = 0 },
			func(s transport.PassThroughStats) int64 { return s.NoBody }},
		{"GetBody set", transport.DefaultConfig(), func(r *http.Request) {
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("hello")), nil }
		}, func(s transport.PassThroughStats) int64 { return s.GetBodySet }},
		{"Upgrade", transport.DefaultConfig(), func(r *http.Request) { r.Header.Set("Upgrade", "websocket") },
			func(s transport.PassThroughStats) int64 { return s.Upgrade }},
		{"Connection: Upgrade among tokens", transport.DefaultConfig(), func(r *http.Request) { r.Header.Add("Connection", "keep-alive, UPGRADE") },
			func(s transport.PassThroughStats) int64 { return s.Upgrade }},
		{"X-Stream-Protocol-Version", transport.DefaultConfig(), func(r *http.Request) { r.Header.Set("X-Stream-Protocol-Version", "v4.channel.k8s.io") },
			func(s transport.PassThroughStats) int64 { return s.Upgrade }},
		{"Upgrade without a body", transport.DefaultConfig(), func(r *http.Request) {
			r.Header.Set("Upgrade", "websocket")
			r.Body, r.ContentLength = nil, 0
		}, func(s transport.PassThroughStats) int64 { return s.Upgrade }},
		{"SPDY upgrade with NoBody", transport.DefaultConfig(), func(r *http.Request) {
			r.Header.Set("X-Stream-Protocol-Version", "v4.channel.k8s.io")
			r.Body, r.ContentLength = http.NoBody, 0
		}, func(s transport.PassThroughStats) int64 { return s.Upgrade }},
		{"Disabled", disabled, func(*http.Request) {},
			func(s transport.PassThroughStats) int64 { return s.Disabled }},
		{"negative total", noTotal, func(*http.Request) {},
			func(s transport.PassThroughStats) int64 { return s.Disabled }},
		{"negative per request", noPerReq, func(*http.Request) {},
			func(s transport.PassThroughStats) int64 { return s.Disabled }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inner := h1Client(t)
			rec := &recorder{rt: inner}
			tr := transport.New(rec, tc.cfg)
			req, err := http.NewRequest(http.MethodPost, srv.URL, hiddenReader{strings.NewReader("hello")})
			if err != nil {
				t.Fatal(err)
			}
			tc.setup(req)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if rec.last() != req {
				t.Error("the inner RoundTripper got a different request: a pass-through must hand on the caller's own")
			}
			st := tr.Stats()
			if tc.reason(st.PassedThrough) != 1 || st.Buffered != 0 || st.Requests != 1 {
				t.Errorf("stats %+v: want one pass-through of this reason and nothing buffered", st)
			}
			if req.Body != nil && req.Body != http.NoBody && string(got) != "hello" {
				t.Errorf("echo %q, want hello", got)
			}
		})
	}
}

// h1Client returns a plain HTTP/1.1 transport that closes its idle
// connections at the end of the test.
func h1Client(t testing.TB) *http.Transport {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// TestRequestNotModified checks the RoundTripper contract: a buffered
// request is sent as a copy, the caller's stays as it was, and the
// response names the caller's request.
func TestRequestNotModified(t *testing.T) {
	srv := newEcho(t)
	rec := &recorder{rt: h1Client(t)}
	tr := transport.New(rec, transport.DefaultConfig())
	body := hiddenReader{strings.NewReader("hello, world")}
	req, err := http.NewRequest(http.MethodPut, srv.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Test", "1")
	before := *req
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "hello, world" {
		t.Errorf("echo %q", got)
	}
	if req.Body != before.Body || req.GetBody != nil || req.ContentLength != before.ContentLength ||
		len(req.Header) != 1 || req.Header.Get("X-Test") != "1" || req.URL != before.URL {
		t.Errorf("the caller's request changed: %+v", req)
	}
	if resp.Request != req {
		t.Error("resp.Request is not the caller's request")
	}
	sent := rec.last()
	if sent == req || sent.GetBody == nil || sent.Body == req.Body {
		t.Error("the inner RoundTripper did not get a copy with a body and GetBody of the Transport's")
	}
	drain(t, tr)
}

// TestUpgradeThroughReverseProxy sends an Upgrade request with a body
// through an httputil.ReverseProxy over the Transport: it passes untouched,
// the 101 response's body stays writable, and bytes flow both ways.
func TestUpgradeThroughReverseProxy(t *testing.T) {
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, err := io.ReadAll(r.Body); err != nil || string(b) != "hello" || r.Header.Get("Upgrade") != "test-proto" {
			http.Error(w, "want an upgrade with the body hello", http.StatusBadRequest)
			return
		}
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: test-proto\r\nConnection: Upgrade\r\n\r\n")
		buf.Flush()
		line, err := buf.ReadString('\n') // echo one line over the upgraded connection
		if err != nil {
			return
		}
		buf.WriteString("echo: " + line)
		buf.Flush()
	}), proxytest.Options{HTTP1: true})
	tr := transport.New(h1Client(t), quietConfig())
	u := &upstream{srv: up}
	f := newFront(t, false, newProxy(u, tr, tr.ErrorHandler, nil))

	req, err := http.NewRequest(http.MethodPost, f.srv.URL, hiddenReader{strings.NewReader("hello")})
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 5
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "test-proto")
	resp, err := f.client(t).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %s, want 101", resp.Status)
	}
	rw, ok := resp.Body.(io.ReadWriter)
	if !ok {
		t.Fatalf("101 body %T is not writable", resp.Body)
	}
	if _, err := io.WriteString(rw, "ping\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(rw).ReadString('\n')
	if err != nil || line != "echo: ping\n" {
		t.Fatalf("read %q, %v over the upgraded connection", line, err)
	}
	st := tr.Stats()
	if st.PassedThrough.Upgrade != 1 || st.Buffered != 0 {
		t.Errorf("stats %+v: want one Upgrade pass-through", st)
	}
}

// TestOverLimitBodiesIntact sends bodies far over the per-request limit
// and the budget: they stream through intact, and never more than the
// budget is held.
func TestOverLimitBodiesIntact(t *testing.T) {
	u := newUpstream(t, true, 0)
	cfg := quietConfig()
	cfg.TotalBytes, cfg.PerRequestBytes = 256<<10, 64<<10
	tr := transport.New(transportTo(t, u.srv), cfg)
	f := newFront(t, false, newProxy(u, tr, tr.ErrorHandler, nil))
	bodies := uniformBodies(11, 24, int(cfg.PerRequestBytes)+1, 2<<20)
	r := runLoad(t.Context(), f.client(t), f.srv.URL, bodies, 8)
	drain(t, tr)
	st := tr.Stats()
	if r.failed != 0 || u.wrong.Load() != 0 || u.ok.Load() != int64(len(bodies)) {
		t.Errorf("%v; %d arrived intact, %d wrong", r, u.ok.Load(), u.wrong.Load())
	}
	if st.Buffered != int64(len(bodies)) || st.PeakBytesHeld > cfg.TotalBytes {
		t.Errorf("stats %+v: want every body buffered, peak within %d", st, cfg.TotalBytes)
	}
}
