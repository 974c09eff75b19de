package transport

import (
	"log"
	"net/http"
)

// ErrorHandler answers a request that the inner RoundTripper failed with
// err, for httputil.ReverseProxy.ErrorHandler:
//   - 429 Too Many Requests, with a Retry-After of Config.RetryAfter, if
//     ShouldRetryLater(err);
//   - else 502 Bad Gateway. It logs err to Config.ErrorLog.
//
// No error text reaches the client: the 429 carries a line of text, and
// the 502 no body. For a proxy in front of the Kubernetes API, use
// Responder().Error instead, which answers with a Kubernetes Status body.
//
// A gRPC request gets HTTP 200 with grpc-status UNAVAILABLE instead, and
// Config.RetryAfter as its grpc-retry-pushback-ms in the first case.
//
// Call it before anything is written to w. Stats counts each answer. It is
// safe for concurrent use.
func (t *Transport) ErrorHandler(w http.ResponseWriter, r *http.Request, err error) {
	t.answer(w, r, err, false)
}

// answer writes ErrorHandler's answer to r's err: gRPC's if r is a gRPC
// request, else with a Status body if asStatus.
func (t *Transport) answer(w http.ResponseWriter, r *http.Request, err error, asStatus bool) {
	t.initZero()
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
