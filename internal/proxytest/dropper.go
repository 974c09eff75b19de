package proxytest

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// A Dropper is an HTTP/1.1 server on loopback whose reused connections fail
// after it processed a request. It answers the first request of each
// connection with an empty 200. It reads the second whole, then closes the
// connection without a byte of answer. So a client that reuses a connection
// sees it fail before the response's first byte, after the server applied
// the request.
type Dropper struct {
	*httptest.Server
	applied atomic.Int64
}

// connRequestsKey is the key of a connection's request count in the
// contexts of its requests.
type connRequestsKey struct{}

// NewDropper starts a Dropper, closed at the end of t.
func NewDropper(t testing.TB) *Dropper {
	d := &Dropper{}
	d.Server = httptest.NewUnstartedServer(http.HandlerFunc(d.handle))
	d.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connRequestsKey{}, new(atomic.Int64))
	}
	d.Config.ErrorLog = QuietLog()
	d.Start()
	t.Cleanup(d.Close)
	return d
}

// Applied returns how many requests with a body d has read whole.
func (d *Dropper) Applied() int64 { return d.applied.Load() }

func (d *Dropper) handle(w http.ResponseWriter, r *http.Request) {
	n := r.Context().Value(connRequestsKey{}).(*atomic.Int64).Add(1)
	if b, err := io.ReadAll(r.Body); err == nil && len(b) > 0 {
		d.applied.Add(1)
	}
	if n%2 == 1 {
		w.WriteHeader(http.StatusOK)
		return
	}
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		conn.Close()
	}
}

// WarmUp sends a GET without a body to d with rt and reads its answer, so
// that rt's next request to d goes on a reused connection, as its second.
func (d *Dropper) WarmUp(t testing.TB, rt http.RoundTripper) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, d.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	io.Copy(io.Discard, resp.Body) // at EOF the connection is idle again
	resp.Body.Close()
}
