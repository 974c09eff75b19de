package grpc

import (
	"net"
	"sync"
	"sync/atomic"

	"golang.org/x/net/http2"

	"github.com/teebody/teebody/internal/proxytest"
)

// refusingListener hands the connections it accepts to the grpc-go server,
// but for the next refuse of them, which it serves itself in h2c: it
// refuses their streams with a graceful GOAWAY whose last stream ID is 0 as
// soon as the client has sent more than after bytes of a stream's body, or
// all of it (it grants the flow-control window that takes, as proxytest's
// RefuseAfter does). That is the refusal of a real
// GOAWAY without the race between the client's stream and the server's
// GOAWAY: the client must send the request again, which it can only do
// through GetBody. A picked connection that ends without a stream to refuse
// gives its turn back. Not goawaytest.RefuseAfter: its server would run
// grpc-go through net/http (ServeHTTP), not grpc-go's own transport.
type refusingListener struct {
	net.Listener
	after   int64        // body bytes a stream sends before it is refused
	refuse  atomic.Int64 // connections still to refuse
	refused atomic.Int64 // GOAWAYs sent

	mu     sync.Mutex
	conns  map[net.Conn]bool // guarded by mu: the refusing connections still open
	closed bool              // guarded by mu
	wg     sync.WaitGroup
}

// newRefusingListener returns a refusingListener around ln whose refusing
// connections wait for more than after bytes of a body. A test that needs a
// body past a replay limit when the refusal lands passes that limit.
func newRefusingListener(ln net.Listener, after int64) *refusingListener {
	return &refusingListener{Listener: ln, after: after, conns: map[net.Conn]bool{}}
}

func (l *refusingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.refuse.Add(-1) < 0 {
			l.refuse.Add(1)
			return c, nil
		}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.conns[c] = true
		l.wg.Add(1)
		l.mu.Unlock()
		go l.serveRefusal(c)
	}
}

// Close stops accepting, closes the refusing connections still open and
// waits for their goroutines.
func (l *refusingListener) Close() error {
	err := l.Listener.Close()
	l.mu.Lock()
	l.closed = true
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
	return err
}

// serveRefusal speaks HTTP/2 on c just far enough to refuse its streams,
// then reads until the client closes the connection.
func (l *refusingListener) serveRefusal(c net.Conn) {
	defer l.wg.Done()
	sent := false
	defer func() {
		if !sent {
			l.refuse.Add(1)
		}
		l.mu.Lock()
		delete(l.conns, c)
		l.mu.Unlock()
		c.Close()
	}()
	received := map[uint32]int64{} // body bytes by stream
	_ = proxytest.ServeFrames(c, func(fr *http2.Framer, f http2.Frame) bool {
		d, ok := f.(*http2.DataFrame)
		if !ok || sent {
			return true
		}
		id := d.Header().StreamID
		received[id] += int64(len(d.Data()))
		if !d.StreamEnded() && received[id] <= l.after {
			// Give back the window the frame took, so that the client
			// can send past after.
			n := d.Header().Length
			return n == 0 || fr.WriteWindowUpdate(0, n) == nil && fr.WriteWindowUpdate(id, n) == nil
		}
		sent = true
		l.refused.Add(1)
		return fr.WriteGoAway(0, http2.ErrCodeNo, nil) == nil
	})
}
