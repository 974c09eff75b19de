package goawaytest_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/teebody/teebody/pkg/goawaytest"
)

// The handler sees HTTP/2, the client's address and, over TLS, the client
// connection's TLS state; the server listens on loopback.
func TestHandlerSees(t *testing.T) {
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) {
			var seen atomic.Pointer[http.Request]
			s := sv.start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen.Store(r) }))
			defer s.Close()
			var local string
			client := s.Client()
			tr := client.Transport.(*http.Transport).Clone()
			dial := tr.DialContext
			if dial == nil {
				dial = new(net.Dialer).DialContext
			}
			tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dial(ctx, network, addr)
				if err == nil {
					local = c.LocalAddr().String()
				}
				return c, err
			}
			defer tr.CloseIdleConnections()
			resp, err := (&http.Client{Transport: tr}).Get(s.URL + "/x")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			r := seen.Load()
			if r.ProtoMajor != 2 || r.RemoteAddr != local || (r.TLS != nil) != (sv.name == "tls") {
				t.Errorf("handler saw %s from %s, TLS %v; want HTTP/2 from %s, TLS %v", r.Proto, r.RemoteAddr, r.TLS != nil, local, sv.name == "tls")
			}
			if r.TLS != nil && r.TLS.NegotiatedProtocol != "h2" {
				t.Errorf("TLS state's protocol %q, want h2", r.TLS.NegotiatedProtocol)
			}
			host, _, _ := net.SplitHostPort(strings.TrimPrefix(strings.TrimPrefix(s.URL, "http://"), "https://"))
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				t.Errorf("URL %s: not a loopback address", s.URL)
			}
			if (s.Certificate() != nil) != (sv.name == "tls") || (s.TLS != nil) != (sv.name == "tls") {
				t.Errorf("Certificate() %v, TLS %v: want both only over TLS", s.Certificate() != nil, s.TLS != nil)
			}
		})
	}
}

// Config and TLS may be changed before Start: the handler, a ConnContext
// and the TLS configuration are those the server uses.
func TestUnstartedConfig(t *testing.T) {
	type key struct{}
	s := goawaytest.NewUnstartedServer(http.NotFoundHandler())
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.Context().Value(key{}).(string) + " " + tls.VersionName(r.TLS.Version)))
	})
	s.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, key{}, "mine") }
	s.TLS = &tls.Config{MinVersion: tls.VersionTLS13}
	s.StartTLS()
	defer s.Close()
	got, err := send(t, s, "GET", "/", "", false)
	if want := "200 OK mine TLS 1.3"; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	if s.TLS.MinVersion != tls.VersionTLS13 || len(s.TLS.Certificates) != 1 {
		t.Errorf("TLS: MinVersion %x, %d certificates; want TLS 1.3 and one", s.TLS.MinVersion, len(s.TLS.Certificates))
	}
}

// Close closes the connections, so a handler waiting for its request's
// end returns, and it waits for that handler.
func TestCloseWaitsForHandlers(t *testing.T) {
	started := make(chan struct{})
	var returned atomic.Bool
	s := goawaytest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
		returned.Store(true)
	}))
	errc := make(chan error, 1)
	go func() {
		_, err := send(t, s, "GET", "/", "", false)
		errc <- err
	}()
	<-started
	s.Close()
	if !returned.Load() {
		t.Error("Close returned before the handler")
	}
	if err := <-errc; err == nil {
		t.Error("the request succeeded on a closed server")
	}
	s.Close() // again: nothing to do
}

// A server that never started closes.
func TestCloseUnstarted(t *testing.T) {
	goawaytest.NewUnstartedServer(http.NotFoundHandler()).Close()
}

// Starting twice panics, as httptest's does.
func TestStartTwice(t *testing.T) {
	s := goawaytest.NewServer(http.NotFoundHandler())
	defer s.Close()
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	s.Start()
}

// A client that does not speak HTTP/2 fails at once, and nothing is left
// behind (goleak, in TestMain).
func TestHTTP1Fails(t *testing.T) {
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) {
			s := sv.start(http.HandlerFunc(echo))
			defer s.Close()
			tr := &http.Transport{}
			if s.TLS != nil {
				tr.TLSClientConfig = s.Client().Transport.(*http.Transport).TLSClientConfig
			}
			defer tr.CloseIdleConnections()
			ctx := t.Context()
			req, _ := http.NewRequestWithContext(ctx, "GET", s.URL, nil)
			if resp, err := (&http.Client{Transport: tr}).Do(req); err == nil {
				resp.Body.Close()
				t.Errorf("HTTP/1.1 got %s", resp.Status)
			}
			wantStats(t, s, goawaytest.Stats{})
		})
	}
}
