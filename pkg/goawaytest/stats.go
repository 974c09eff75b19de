package goawaytest

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
)

// Stats are a Server's counts since it started.
type Stats struct {
	// Requests is the number of requests that the handler ran.
	Requests int64
	// Refusals is the number of streams that a GOAWAY refused: streams that
	// a client opened with an ID above the GOAWAY's last stream ID. The
	// handler ran none of them.
	Refusals int64
	// Goaways is the number of connections that got a GOAWAY, from an
	// option or from the http.Server (a handler's "Connection: close", for
	// one).
	Goaways int64
}

// Stats returns the server's counts so far. A request is counted before its
// handler runs, and a GOAWAY before it is sent, with the streams it refuses
// that the server has read. A stream that a client sent before it read the
// GOAWAY that refuses it is counted once the server reads the stream. By
// then the client may have sent the request again. Close discards the
// streams that the server has not read.
func (s *Server) Stats() Stats {
	return Stats{Requests: s.requests.Load(), Refusals: s.refusals.Load(), Goaways: s.goaways.Load()}
}

// Ran returns the number of times the handler ran a request with the
// method and request URI (path and query) of r, which may be a client's
// request or a server's. An empty method means GET.
func (s *Server) Ran(r *http.Request) int64 {
	uri := r.RequestURI
	if r.URL != nil {
		uri = r.URL.RequestURI()
	}
	s.ranMu.Lock()
	defer s.ranMu.Unlock()
	return s.ran[runKey(r.Method, uri)]
}

func runKey(method, uri string) string {
	if method == "" {
		method = http.MethodGet
	}
	return method + " " + uri
}

// count wraps h, or http.DefaultServeMux if h is nil, so that it counts the
// requests it runs, sets their TLS state, and runs none once Close has
// stopped the handlers.
func (s *Server) count(h http.Handler) http.Handler {
	if h == nil {
		h = http.DefaultServeMux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hmu.Lock()
		if s.stopped { // its connection is closed: no client sees it
			s.hmu.Unlock()
			return
		}
		s.handlers.Add(1)
		s.hmu.Unlock()
		defer s.handlers.Done()
		if st, ok := r.Context().Value(tlsStateKey{}).(*tls.ConnectionState); ok && r.TLS == nil {
			r.TLS = st
		}
		s.requests.Add(1)
		s.ranMu.Lock()
		s.ran[runKey(r.Method, r.RequestURI)]++
		s.ranMu.Unlock()
		h.ServeHTTP(w, r)
	})
}

type tlsStateKey struct{}

// withTLSState wraps an http.Server's ConnContext, which may be nil, so
// that a connection's context carries its client connection's TLS state.
func withTLSState(next func(context.Context, net.Conn) context.Context) func(context.Context, net.Conn) context.Context {
	return func(ctx context.Context, c net.Conn) context.Context {
		if pc, ok := c.(*pipeConn); ok && pc.tls != nil {
			ctx = context.WithValue(ctx, tlsStateKey{}, pc.tls)
		}
		if next != nil {
			ctx = next(ctx, c)
		}
		return ctx
	}
}
