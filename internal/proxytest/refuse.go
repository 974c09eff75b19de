package proxytest

import (
	"net/http"
	"sync"
)

// connPicker picks, for goawaytest.RefuseAfter, the first request of the
// first connection that sends one, and of one in every `every` after it.
// So goawaytest refuses every stream of a picked connection: the first
// with a GOAWAY whose last stream ID is 0, and the others as they come. A
// connection is known by its client's address: one that reuses the address
// of a connection not picked takes no turn. Go's HTTP/2 client dials
// once per request that finds no connection ready and closes the
// connections it does not keep: these send no request, so they take no
// turn, and a burst of requests cannot hide every refusal in them.
type connPicker struct {
	every int64

	mu     sync.Mutex
	conns  int64           // guarded by mu: the connections that sent a request
	served map[string]bool // guarded by mu: the client addresses of those not picked
}

func newConnPicker(every int64) *connPicker {
	return &connPicker{every: every, served: map[string]bool{}}
}

// pick reports whether r is the first request of a picked connection.
// goawaytest calls it for no other request of a picked connection: the
// ones after the first wait for its refusal, which refuses them.
func (p *connPicker) pick(r *http.Request) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.served[r.RemoteAddr] {
		return false
	}
	n := p.conns
	p.conns++
	if n%p.every == 0 {
		return true
	}
	p.served[r.RemoteAddr] = true
	return false
}
