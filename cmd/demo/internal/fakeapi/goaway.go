package fakeapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// requestsKey is the context key of a connection's request count.
type requestsKey struct{}

// ConnContext gives each connection a request count: set it as the
// http.Server's ConnContext when serving Options.GoawayAfter (Start does).
func ConnContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, requestsKey{}, new(atomic.Int64))
}

// goawayAfter answers the n-th request of each connection with
// "Connection: close": over HTTP/2, Go's server then sends a graceful
// GOAWAY, answers the streams it had accepted, and refuses the later ones.
// A request on a connection without a count (no ConnContext) gets a 500.
func goawayAfter(n int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count, ok := r.Context().Value(requestsKey{}).(*atomic.Int64)
		if !ok {
			respond(w, r, apierrors.NewInternalError(errors.New("fakeapi: GoawayAfter without ConnContext")))
			return
		}
		if count.Add(1) == n {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}
