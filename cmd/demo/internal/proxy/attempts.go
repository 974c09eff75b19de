package proxy

import (
	"net/http"
	"sync/atomic"

	"github.com/teebody/teebody/pkg/transport"
)

// Attempts is what the transport.Reports of the requests a Proxy forwarded
// add up to.
type Attempts struct {
	// Replayed counts the requests whose body was sent more than once.
	Replayed int64
	// Most is the most times the body of one request was sent.
	Most int
}

// attemptCounter adds up the Reports of the requests it serves. It is safe
// for concurrent use.
type attemptCounter struct {
	replayed atomic.Int64
	most     atomic.Int64
}

// wrap returns h with a transport.Report in each request's context, added
// to c once h returns or panics (ReverseProxy aborts a response that broke
// off with a panic).
func (c *attemptCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var report transport.Report
		defer func() { c.add(report.Attempts) }()
		h.ServeHTTP(w, r.WithContext(transport.WithReport(r.Context(), &report)))
	})
}

// add counts a request whose body was sent n times.
func (c *attemptCounter) add(n int) {
	if n > 1 {
		c.replayed.Add(1)
	}
	for {
		most := c.most.Load()
		if int64(n) <= most || c.most.CompareAndSwap(most, int64(n)) {
			return
		}
	}
}

// load returns the sums so far.
func (c *attemptCounter) load() Attempts {
	return Attempts{Replayed: c.replayed.Load(), Most: int(c.most.Load())}
}
