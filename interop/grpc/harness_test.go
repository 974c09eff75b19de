package grpc

import (
	"crypto/x509"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
)

// The setup a Go proxy user has: grpc-go servers spoken to in h2c (HTTP/2
// without TLS, as inside a cluster), behind an httputil.ReverseProxy whose
// own front is HTTP/2 over TLS, which grpc-go clients call.

// Each upstream connection ends after about maxAge (grpc-go adds a jitter of
// up to 10%) with grpc-go's graceful GOAWAY. The grace is far longer than
// an RPC of these tests, so no RPC is cut by the forced close after it: a
// lost RPC is one that the GOAWAY refused.
const (
	maxAge      = 50 * time.Millisecond
	maxAgeGrace = 30 * time.Second
)

// upstream is a grpc-go server of the checked service on a loopback
// listener.
type upstream struct {
	addr string
	svc  *checked
}

// startUpstream serves the checked service in h2c on ln (nil: a new
// loopback listener), ending each connection after maxAge when age is
// true. The test's cleanup stops it.
func startUpstream(t *testing.T, ln net.Listener, age bool) *upstream {
	t.Helper()
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	var opts []grpc.ServerOption
	if age {
		opts = append(opts, grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionAge:      maxAge,
			MaxConnectionAgeGrace: maxAgeGrace,
		}))
	}
	s := grpc.NewServer(opts...)
	u := &upstream{addr: ln.Addr().String(), svc: newChecked()}
	u.svc.register(s)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(ln) // returns when Stop closes ln
	}()
	t.Cleanup(func() {
		s.Stop()
		<-done
	})
	return u
}

// h2cTransport is the plain transport to an h2c upstream: net/http's, with
// HTTP/2 forced (prior knowledge), as a ReverseProxy to gRPC needs for
// trailers.
func h2cTransport() *http.Transport {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return tr
}

// startProxy serves an httputil.ReverseProxy to u over HTTP/2 with TLS,
// with rt as its transport and eh as its error handler (nil: ReverseProxy's
// own, which logs the error to errLog and answers an empty 502). It returns
// the proxy's address and the pool that trusts its certificate. The test's
// cleanup closes it.
func startProxy(t *testing.T, u *upstream, rt http.RoundTripper, eh func(http.ResponseWriter, *http.Request, error), errLog io.Writer) (string, *x509.CertPool) {
	t.Helper()
	target := &url.URL{Scheme: "http", Host: u.addr}
	if errLog == nil {
		errLog = io.Discard
	}
	rp := &httputil.ReverseProxy{
		Rewrite:      func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:    rt,
		ErrorHandler: eh,
		ErrorLog:     log.New(errLog, "", 0),
	}
	srv := httptest.NewUnstartedServer(rp)
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(func() {
		srv.Close()
		if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	})
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv.Listener.Addr().String(), pool
}

// dial returns a grpc-go client of the proxy at addr. The test's cleanup
// closes it.
func dial(t *testing.T, addr string, pool *x509.CertPool, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	creds := credentials.NewClientTLSFromCert(pool, "")
	cc, err := grpc.NewClient("passthrough:///"+addr, append([]grpc.DialOption{grpc.WithTransportCredentials(creds)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}
