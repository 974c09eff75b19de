package transport

import (
	"errors"
	"log"
	"net/http"
	"strings"

	"github.com/teebody/teebody/pkg/teebody"
)

// The text of the errors that Go's transports (and ReverseProxy's body
// wrapper) return, as plain strings, when a request that the upstream never
// processed cannot be sent again because its body cannot be rewound
// (docs/design.md, facts 1, 5 and 6). None can be matched with errors.Is, so
// ShouldRetryLater falls back to their text: they reach it when a caller sets
// no GetBody (the request passed through) or uses an inner RoundTripper of
// its own.
const (
	// golang.org/x/net/http2 and net/http's bundled copy:
	// "http2: Transport: cannot retry err [%v] after Request.Body was
	// written; define Request.GetBody to avoid this error". The HTTP/2
	// transport only produces it for errors that mean the stream was not
	// processed (a graceful GOAWAY, a refused stream, an unusable conn).
	errTextCannotRetry = "after Request.Body was written; define Request.GetBody to avoid this error"
	// net/http: "net/http: cannot rewind body after connection loss",
	// returned only when the transport had decided the request was safe
	// to send again.
	errTextCannotRewind = "cannot rewind body after connection loss"
	// net/http/httputil: "ReverseProxy does an invalid Read on closed
	// Body". Without GetBody, the HTTP/2 transport resends a refused
	// request whose body it had not started to write with the same body,
	// which its first attempt had already closed; ReverseProxy's wrapper
	// then refuses the Read. Seen through the demo's unfixed proxy on Go
	// 1.26; Go 1.27's ReverseProxy has no such wrapper.
	errTextClosedProxyBody = "ReverseProxy does an invalid Read on closed Body"
	// The HTTP/2 server's request body, read after the handler closed it:
	// "body closed by handler" (unexported in net/http's HTTP/2 and in
	// golang.org/x/net/http2). The same resend as errTextClosedServerBody,
	// behind an HTTP/2 front: Go 1.27's ReverseProxy, or a hand-written
	// proxy, hands its transport that body itself.
	errTextClosedH2ServerBody = "body closed by handler"
	// quic-go's HTTP/3 transport (github.com/quic-go/quic-go/http3, read in
	// v0.65.0; interop/http3 pins them). It resends a refused request once;
	// when that fails too it returns the error bare. A stream reset with
	// H3_REQUEST_REJECTED, which RFC 9114 gives only to a request not
	// processed, reads "http3: parsing frame failed: H3_REQUEST_REJECTED".
	// Without GetBody the first refusal already fails with the HTTP/2 text
	// of errTextCannotRetry, prefixed "http3:".
	errTextH3RequestRejected = "H3_REQUEST_REJECTED"
	// quic-go's HTTP/3 transport, when no stream could be opened after a
	// GOAWAY: "http3: conn unusable: connection in graceful shutdown".
	errTextH3GoAway = "conn unusable: connection in graceful shutdown"
)

// errTextClosedServerBody is the same failure where nothing wraps the
// inbound body: Go 1.27's ReverseProxy, and hand-written proxies, hand their
// transport the HTTP/1 server's body itself, which the first attempt closed,
// so the resend reads "http: invalid Read on closed Body"
// (http.ErrBodyReadAfterClose). A proxy's ErrorHandler only sees it while
// its handler runs, when only the transport closes the inbound body.
var errTextClosedServerBody = http.ErrBodyReadAfterClose.Error()

// errTextNotReplayable is the text that begins every error matching
// teebody.ErrNotReplayable. Some proxies flatten the transport's error into
// a string of their own: apimachinery's proxy transport (UpgradeAwareHandler
// with wrapTransport true, as the kube-aggregator wires it) answers
// "error trying to reach service: teebody: body is not replayable: ...", on
// which errors.Is no longer works.
var errTextNotReplayable = teebody.ErrNotReplayable.Error()

// ShouldRetryLater reports whether err means that the upstream did not
// process the request, which could not be sent again. The client may then
// safely send it later. It knows errors matching teebody.ErrNotReplayable,
// and the texts of the errors that Go's transports, and quic-go's HTTP/3
// transport, return in that case.
func ShouldRetryLater(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, teebody.ErrNotReplayable) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, errTextNotReplayable) ||
		strings.Contains(msg, errTextCannotRetry) ||
		strings.Contains(msg, errTextCannotRewind) ||
		strings.Contains(msg, errTextClosedProxyBody) ||
		strings.Contains(msg, errTextClosedServerBody) ||
		strings.Contains(msg, errTextClosedH2ServerBody) ||
		strings.Contains(msg, errTextH3RequestRejected) ||
		strings.Contains(msg, errTextH3GoAway)
}

// ErrorHandler answers a request that the inner RoundTripper failed with
// err, for httputil.ReverseProxy.ErrorHandler:
//   - 429 Too Many Requests, with a Retry-After of Config.RetryAfter, if
//     ShouldRetryLater(err);
//   - else 502 Bad Gateway. It logs err to Config.ErrorLog.
//
// No error text reaches the client. A request to the Kubernetes API (path
// /api, /apis, or below) gets a Kubernetes Status body. Any other gets a
// line of text with the 429, and an empty 502.
//
// A gRPC request gets HTTP 200 with grpc-status UNAVAILABLE instead, and
// Config.RetryAfter as its grpc-retry-pushback-ms in the first case.
//
// Call it before anything is written to w. Stats counts each answer. It is
// safe for concurrent use.
func (t *Transport) ErrorHandler(w http.ResponseWriter, r *http.Request, err error) {
	t.answer(w, r, err, isKubernetesAPI(r))
}

// answer writes ErrorHandler's answer to r's err: gRPC's if r is a gRPC
// request, else with a Status body if asStatus.
func (t *Transport) answer(w http.ResponseWriter, r *http.Request, err error, asStatus bool) {
	grpcType := grpcContentType(r)
	if ShouldRetryLater(err) {
		t.counters.retryLaterWritten.Add(1)
		if grpcType != "" {
			writeGRPC(w, grpcType, grpcMsgRetryLater, t.cfg.RetryAfter)
			return
		}
		writeRetryLater(w, t.cfg.RetryAfter, asStatus)
		return
	}
	t.counters.badGatewayWritten.Add(1)
	logf := log.Printf
	if t.cfg.ErrorLog != nil {
		logf = t.cfg.ErrorLog.Printf
	}
	logf("http: proxy error: %v", err)
	if grpcType != "" {
		writeGRPC(w, grpcType, grpcMsgBadGateway, 0)
		return
	}
	writeBadGateway(w, asStatus)
}
