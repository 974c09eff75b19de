package proxytest_test

import (
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

// conns is a handler that answers 200, or 404 on /missing, and records the
// client address of each request: one address per connection.
type conns struct {
	mu    sync.Mutex
	addrs map[string]bool // guarded by mu
}

func (c *conns) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.addrs[r.RemoteAddr] = true
	c.mu.Unlock()
	if r.URL.Path == "/missing" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("X-Handler", "yes")
	w.(http.Flusher).Flush()
	_, _ = io.WriteString(w, "hello")
}

func (c *conns) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.addrs)
}

// get sends n GETs of path to s one after another and returns their
// responses' status, header and body of the last one.
func get(t *testing.T, s *proxytest.Server, path string, n int) (last *http.Response, body string) {
	t.Helper()
	tr := s.Transport()
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for range n {
		resp, err := client.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		last, body = resp, string(b)
	}
	return last, body
}

func TestServerHTTP2(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        proxytest.Options
		path        string
		goaways     int64
		moreThanOne bool // connection used
	}{
		{"never", proxytest.Options{}, "/", 0, false},
		{"every 2nd", proxytest.Options{Every: 2}, "/", 3, true},
		{"not on errors", proxytest.Options{Every: 1}, "/missing", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &conns{addrs: map[string]bool{}}
			s := proxytest.NewServer(h, tc.opts)
			defer s.Close()
			resp, body := get(t, s, tc.path, 6)
			if resp.ProtoMajor != 2 {
				t.Errorf("served over %s, want HTTP/2", resp.Proto)
			}
			if tc.path == "/" && (resp.StatusCode != http.StatusOK || body != "hello") {
				t.Errorf("got %s %q, want the handler's 200 hello", resp.Status, body)
			}
			if got := s.Goaways(); got != tc.goaways {
				t.Errorf("Goaways() = %d, want %d", got, tc.goaways)
			}
			// A GOAWAY can race with the next request by a stream, so count
			// only whether the client had to move to another connection.
			if n := h.count(); (n > 1) != tc.moreThanOne {
				t.Errorf("6 requests went over %d connections", n)
			}
		})
	}
}

func TestServerChance(t *testing.T) {
	s := proxytest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}), proxytest.Options{Chance: 0.5})
	defer s.Close()
	get(t, s, "/", 40)
	if g := s.Goaways(); g == 0 || g == 40 {
		t.Errorf("Goaways() = %d of 40 responses at chance 0.5", g)
	}
}

// TestServerHTTP1: each response ends its connection without saying so; the
// client, sending GETs (which net/http may send again), gets every answer
// and needs a new connection for each.
func TestServerHTTP1(t *testing.T) {
	h := &conns{addrs: map[string]bool{}}
	s := proxytest.NewServer(h, proxytest.Options{HTTP1: true, Every: 1})
	defer s.Close()
	resp, body := get(t, s, "/", 3)
	if resp.ProtoMajor != 1 || resp.StatusCode != http.StatusOK || resp.Close {
		t.Errorf("got %s %s, Close %t; want HTTP/1.1 200 promising keep-alive", resp.Proto, resp.Status, resp.Close)
	}
	if body != "" || resp.Header.Get("X-Handler") != "" {
		t.Errorf("got body %q, header %v; want the handler's response replaced by an empty one", body, resp.Header)
	}
	if got := s.Goaways(); got != 3 {
		t.Errorf("Goaways() = %d, want 3", got)
	}
	if n := h.count(); n != 3 {
		t.Errorf("3 requests went over %d connections, want 3", n)
	}
}

// TestServerHijack: a handler may take the connection over; what it writes
// there is the response.
func TestServerHijack(t *testing.T) {
	s := proxytest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 202 Accepted\r\nContent-Length: 4\r\nConnection: close\r\n\r\nmine")
		_ = buf.Flush()
	}), proxytest.Options{HTTP1: true, Every: 1})
	defer s.Close()
	resp, body := get(t, s, "/", 1)
	if resp.StatusCode != http.StatusAccepted || body != "mine" || s.Goaways() != 0 {
		t.Errorf("got %s %q, %d goaways; want the handler's own 202 mine, none", resp.Status, body, s.Goaways())
	}
}
