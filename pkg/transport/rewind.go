package transport

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptrace"
	"reflect"
	"sync/atomic"
)

// GetBody calls that no proof stands behind.
//
// net/http's HTTP/1 transport sends a request again, rewinding its body
// through GetBody, after the request failed on a reused connection. It does
// so in two cases (persistConn.shouldRetryRequest, on Go 1.26 and 1.27):
//   - nothing of the request reached the connection (nothingWrittenError):
//     the upstream did not get it;
//   - the request is replayable (Request.isReplayable: GetBody set, and a
//     GET, HEAD, OPTIONS or TRACE, or an Idempotency-Key or
//     X-Idempotency-Key header) and the connection failed before the
//     response's first byte. The upstream may have processed it: a server
//     may apply a write and drop the connection before it answers.
//
// Without GetBody the second case never happens, since a request with a
// body is replayable only with one. So for the requests of the second kind
// (resentAfterWrite), GetBody serves no replay once the request's headers
// were written on a connection that may speak HTTP/1: it returns
// errMayHaveProcessed, which is no proof, and the client gets a 502, as
// through a transport without GetBody. Before its headers are written
// whole, an upstream cannot have processed a request.
//
// What the transport knows at GetBody time, it learns from httptrace:
// net/http calls GotConn with the HTTP/1 connection, and the request's
// WroteHeaders, before it writes the body (TestFactHTTP1ResendsWrittenReplayable,
// TestFactH2GotConnNegotiatedH2 and TestFactH2CGotConnPlain pin them). HTTP/2 over TLS is known by its connection's negotiated
// protocol, "h2", and quic-go's HTTP/3 by the shape of the connection it
// hands GotConn. A connection without TLS may carry HTTP/1 or HTTP/2 with
// prior knowledge (h2c): nothing tells them apart, so it counts as HTTP/1,
// and a replay that a GOAWAY asks for over h2c is refused for such a
// request (docs/design.md, "Resend only on proof").

// errMayHaveProcessed is GetBody's answer when a replay would rest on no
// proof.
var errMayHaveProcessed = errors.New("transport: no replay: the request was written on an HTTP/1 connection that failed, and the upstream may have processed it")

// The states of a wire: what the current attempt of a request did.
const (
	wireUnknown    int32 = iota // no connection yet, or one that is not HTTP/1
	wireHTTP1                   // a connection that may speak HTTP/1
	wireHTTP1Wrote              // the request's headers were written on it
)

// A wire records, from a request's httptrace hooks, whether its current
// attempt wrote the request's headers on a connection that may speak
// HTTP/1. Its hooks may run on the transport's goroutines.
type wire struct {
	state atomic.Int32
}

// gotConn starts an attempt on c.
func (w *wire) gotConn(info httptrace.GotConnInfo) {
	s := wireUnknown
	if mayBeHTTP1(info.Conn) {
		s = wireHTTP1
	}
	w.state.Store(s)
}

// wroteHeaders records that the attempt wrote the request's headers.
func (w *wire) wroteHeaders() {
	w.state.CompareAndSwap(wireHTTP1, wireHTTP1Wrote)
}

// wroteOverHTTP1 reports whether the current attempt wrote the request's
// headers on a connection that may speak HTTP/1.
func (w *wire) wroteOverHTTP1() bool {
	return w.state.Load() == wireHTTP1Wrote
}

// traceWire makes x.out record its attempts in x.wire, if net/http's HTTP/1
// transport would send it again after writing it. Other requests cost
// nothing.
func (x *exchange) traceWire() {
	if !resentAfterWrite(&x.out) {
		return
	}
	ctx := httptrace.WithClientTrace(x.out.Context(), &httptrace.ClientTrace{
		GotConn:      x.wire.gotConn,
		WroteHeaders: x.wire.wroteHeaders,
	})
	x.out = *x.out.WithContext(ctx)
}

// resentAfterWrite reports whether net/http's HTTP/1 transport takes req,
// which has a body and GetBody, for replayable: whether it sends req again
// after writing it (Request.isReplayable, the same on Go 1.26 and 1.27).
func resentAfterWrite(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, key := req.Header["Idempotency-Key"]
	_, xkey := req.Header["X-Idempotency-Key"]
	return key || xkey
}

// mayBeHTTP1 reports whether c, a connection that GotConn names, may carry
// HTTP/1: it is not HTTP/2 over TLS, nor quic-go's HTTP/3.
func mayBeHTTP1(c net.Conn) bool {
	if c == nil {
		return false
	}
	if tc, ok := c.(interface{ ConnectionState() tls.ConnectionState }); ok && tc.ConnectionState().NegotiatedProtocol == "h2" {
		return false
	}
	return !isQUICConn(c)
}

// isQUICConn reports whether c is quic-go's *http3.fakeConn, the net.Conn
// that its HTTP/3 transport hands GotConn for a QUIC connection.
func isQUICConn(c net.Conn) bool {
	t := reflect.TypeOf(c)
	if t.Kind() != reflect.Pointer {
		return false
	}
	t = t.Elem()
	return t.Kind() == reflect.Struct && t.Name() == "fakeConn" && t.PkgPath() == http3Package
}
