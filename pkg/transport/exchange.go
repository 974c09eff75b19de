package transport

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/teebody/teebody/pkg/teebody"
)

// An exchange is one buffered request, from RoundTrip to its end. It holds
// in one allocation what the request needs beyond its Tee: the request sent
// upstream, the response body handed back, and what GetBody and the end of
// the request read.
type exchange struct {
	t   *Transport
	tee *teebody.Tee
	up  upstream      // the upstream's key in adaptive mode, else zero
	rt  *requestTrace // nil without a BodyTrace
	// hooks are the BodyTraces and Reports of the request's context, or
	// nil.
	hooks *hooks
	// wire is what out's current attempt wrote, traced only for a request
	// net/http's HTTP/1 transport sends again after writing it (traceWire).
	wire wire
	// withheld is set once GetBody withheld a replay (errMayHaveProcessed).
	withheld atomic.Bool

	out  http.Request // a shallow copy of the caller's request, sent upstream
	body responseBody // the response body, once a non-empty response came
}

// getBody is the GetBody of x.out: a replay of the body, the Tee's
// refusal, or errMayHaveProcessed for a call that no proof stands behind.
func (x *exchange) getBody() (io.ReadCloser, error) {
	if x.wire.wroteOverHTTP1() {
		x.t.counters.replaysWithheld.Add(1)
		x.withheld.Store(true)
		x.rt.withheld()
		return nil, errMayHaveProcessed
	}
	return x.t.replay(x.tee, x.up, x.rt)
}

// done is what the Tee of a request with a BodyTrace calls once it is
// done; the Tee of a request without one calls untrack alone
// (state.untrackFunc). BodyReleased runs before untrack, so that Drain
// waits for it, and a panic of it still untracks.
func (x *exchange) done() {
	defer x.t.untrack()
	if x.rt != nil {
		x.rt.released()
	}
}

// end ends the request.
func (x *exchange) end() { x.t.end(x.tee) }

// responseBody returns rc, wrapped so that its first Close also ends the
// request. A body that is also an io.Writer stays one.
func (x *exchange) responseBody(rc io.ReadCloser) io.ReadCloser {
	x.body = responseBody{ReadCloser: rc, x: x}
	if w, ok := rc.(io.Writer); ok {
		return writableResponseBody{&x.body, w}
	}
	return &x.body
}

// responseBody is a response body whose first Close also ends its request.
// Close may come from any goroutine, concurrently with Read, and more than
// once: only the first one ends the request.
type responseBody struct {
	io.ReadCloser
	once sync.Once
	x    *exchange
}

func (b *responseBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.x.end)
	return err
}

// writableResponseBody keeps the io.Writer of a body that has one, for an
// inner RoundTripper that returns such a body with content. net/http's
// never does: its one writable body is that of a 101 Switching Protocols
// over HTTP/1, which it makes for any 101 with Upgrade and Connection:
// Upgrade, whether or not the request asked for an upgrade (HTTP/2 skips a
// 101 as informational). A 101 has no content, so RoundTrip hands its body
// back as it came (isEmpty), writable; httputil.ReverseProxy answers one
// that no upgrade asked for with a 502.
type writableResponseBody struct {
	*responseBody
	w io.Writer
}

func (b writableResponseBody) Write(p []byte) (int, error) { return b.w.Write(p) }
