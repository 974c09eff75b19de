package goawaytest

import (
	"math/rand/v2"
	"net/http"
	"sync"
)

// An Option says which GOAWAY frames a Server sends. The zero Option
// changes nothing.
type Option struct {
	apply func(*options) // nil in the zero Option
}

type options struct {
	refuse      func(*http.Request) bool
	refuseAfter int64       // RefuseAfter's n
	after       int64       // EndAfter's n; 0: never
	chance      func() bool // EndChance's draw; nil: never
}

// Refuse makes the server refuse each request for which pick returns true.
// It is RefuseAfter(0, pick): the server sends a graceful GOAWAY once the
// request's body has started to arrive, or at once for a request without a
// body.
func Refuse(pick func(r *http.Request) bool) Option {
	return RefuseAfter(0, pick)
}

// RefuseAfter makes the server refuse each request for which pick returns
// true, once more than n bytes of its body have arrived, or all of it. It
// sends a graceful GOAWAY whose last stream ID is below the request's
// stream. The request's handler does not run. Until then, the server gives
// the request's flow-control window back as its body arrives, so that the
// client can send more than n bytes. The GOAWAY also refuses every stream
// that the client opens on the connection after the request's. So a
// client that sends many requests at once may see more refusals than pick
// chose. Until the GOAWAY, those streams wait unanswered. n < 0 means 0.
//
// A client that waits for "100 Continue" before it sends the body is
// refused once it sends the body anyway, after its own timeout (Go's
// http.Transport.ExpectContinueTimeout).
//
// pick sees the request's method, URL, Host, header, RemoteAddr and TLS.
// Its Body is empty. pick is called again for a request that the client
// sends again after a refusal. It may be called from many goroutines at
// once. The connection's frames wait while it runs, so it should not block.
func RefuseAfter(n int64, pick func(r *http.Request) bool) Option {
	return Option{func(o *options) { o.refuse, o.refuseAfter = pick, max(n, 0) }}
}

// EndAfter makes the server end each connection after its n-th request, as
// nginx's keepalive_requests does. The n-th request is served. A graceful
// GOAWAY whose last stream ID is its stream's refuses the streams that the
// client opened on the connection after it. The requests that Refuse
// refuses do not count. n <= 0 never ends one.
func EndAfter(n int) Option {
	return Option{func(o *options) { o.after = int64(max(n, 0)) }}
}

// EndChance makes the server end the connection of each request with
// probability p, as kube-apiserver's --goaway-chance does. The request is
// served, and a graceful GOAWAY whose last stream ID is its stream's
// refuses the streams that the client opened on the connection after it.
// The draws come from r, one per request that the handler is to run, in
// the order the requests arrive. With EndAfter, the n-th request draws
// too. A nil r draws from a generator with a fixed seed: a test that sends
// its requests one at a time sees the same connections end in every run.
// The server serializes its use of r.
func EndChance(p float64, r *rand.Rand) Option {
	if r == nil {
		r = rand.New(rand.NewPCG(1, 2))
	}
	var mu sync.Mutex
	return Option{func(o *options) {
		o.chance = func() bool {
			mu.Lock()
			defer mu.Unlock()
			return r.Float64() < p
		}
	}}
}
