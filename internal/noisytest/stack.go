package noisytest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// Options configures a Stack.
type Options struct {
	// Config is the transport's configuration. Its ErrorLog is replaced
	// by one that discards.
	Config transport.Config

	// Upstream serves the requests the proxy forwards. Consume is the
	// usual core of it.
	Upstream http.Handler

	// Inner, if not nil, makes the transport's inner RoundTripper from
	// the upstream's own; else that is the inner one.
	Inner func(up http.RoundTripper) http.RoundTripper

	// Front, if not nil, makes what the front serves from the proxy; else
	// the front serves the proxy.
	Front func(proxy http.Handler) http.Handler
}

// Stack is a client-facing HTTP/1.1 server, the front, that serves an
// httputil.ReverseProxy over transport.New, with its ErrorHandler, to a TLS
// HTTP/2 upstream that ends 5% of its connections after a response.
type Stack struct {
	Up        *proxytest.Server
	Transport *transport.Transport
	Front     *httptest.Server
	Client    *http.Client // to the front: 64 idle connections, no compression
}

// New starts a Stack. When tb ends, it closes the clients' connections and
// the front, drains the transport (failing tb if that takes over 30 s) and
// closes the upstream.
func New(tb testing.TB, o Options) *Stack {
	tb.Helper()
	s := new(Stack)
	// Room in the connection's window for every stream's window, so that
	// bodies the upstream does not read yet cannot keep others from
	// reaching it: what is measured is the proxy's side.
	h2 := &http.HTTP2Config{MaxReceiveBufferPerConnection: 64 << 20}
	s.Up = proxytest.NewServer(o.Upstream, proxytest.Options{Chance: 0.05, HTTP2: h2})
	up := s.Up.Transport()
	var inner http.RoundTripper = up
	if o.Inner != nil {
		inner = o.Inner(up)
	}
	o.Config.ErrorLog = proxytest.QuietLog()
	s.Transport = transport.New(inner, o.Config)
	target, err := url.Parse(s.Up.URL)
	if err != nil {
		s.Up.Close()
		tb.Fatal(err)
	}
	var front http.Handler = &httputil.ReverseProxy{
		Rewrite:      func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:    s.Transport,
		ErrorHandler: s.Transport.ErrorHandler,
		ErrorLog:     proxytest.QuietLog(),
	}
	if o.Front != nil {
		front = o.Front(front)
	}
	s.Front = httptest.NewServer(front)
	s.Front.Config.ErrorLog = proxytest.QuietLog()
	s.Client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	tb.Cleanup(func() {
		s.Client.CloseIdleConnections()
		s.Front.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Transport.Drain(ctx); err != nil {
			tb.Errorf("drain: %v; stats %+v", err, s.Transport.Stats())
		}
		up.CloseIdleConnections()
		s.Up.Close()
	})
	return s
}
