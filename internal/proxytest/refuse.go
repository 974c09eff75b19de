package proxytest

import (
	"crypto/tls"
	"net"
	"sync"

	"golang.org/x/net/http2"
)

// refusingListener hands the connections it accepts to the Server, but for
// those that Options.RefuseEvery picks (the first, then one in every
// RefuseEvery), which it serves itself: it refuses their streams with a
// graceful GOAWAY as soon as the client has sent one stream's headers and,
// unless the stream has no body, body bytes (more than Options.RefuseAfter,
// or the whole body). A GOAWAY whose last stream ID
// is 0 refuses every stream, so the client must send them again on another
// connection, which it can do for a stream whose body it wrote only through
// GetBody. That is the refusal of a real GOAWAY, without the race between the
// client opening a stream and the server's GOAWAY: it happens every time.
//
// A client may open connections it never sends a stream on: Go's HTTP/2
// client dials once per request that finds no connection ready, keeps the
// first whose handshake completes and closes the others. A picked
// connection that ends without a stream to refuse passes its turn on to the
// next connection accepted, so that a burst of requests cannot hide every
// refusal in a connection the client threw away.
type refusingListener struct {
	net.Listener
	s     *Server
	every int64
	after int64 // Options.RefuseAfter

	mu       sync.Mutex
	accepted int64             // guarded by mu
	owed     bool              // guarded by mu: a picked connection ended without refusing a stream
	conns    map[net.Conn]bool // guarded by mu: the refusing connections still open
	closed   bool              // guarded by mu: Close was called
	wg       sync.WaitGroup    // the refusing goroutines
}

func (l *refusingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		n := l.accepted
		l.accepted++
		refuse := (n%l.every == 0 || l.owed) && !l.closed
		if refuse {
			l.owed = false
			l.conns[c] = true
			l.wg.Add(1)
		}
		l.mu.Unlock()
		if !refuse {
			return c, nil
		}
		// s.TLS was set by StartTLS before it started the goroutine that
		// calls Accept.
		go l.refuse(tls.Server(c, l.s.TLS), c)
	}
}

// Close stops accepting, closes the refusing connections still open and waits
// for their goroutines. httptest.Server.Close calls it, through the TLS
// listener around it.
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

// refuse speaks HTTP/2 on tc just far enough to refuse its streams, then
// reads until the client closes the connection. If it ends before a stream
// to refuse, the next connection accepted refuses in its place.
func (l *refusingListener) refuse(tc *tls.Conn, raw net.Conn) {
	defer l.wg.Done()
	sent := false
	defer func() {
		l.mu.Lock()
		delete(l.conns, raw)
		if !sent {
			l.owed = true
		}
		l.mu.Unlock()
		raw.Close() // after the turn is passed on: a client that reads to EOF has seen it passed
	}()
	if tc.Handshake() != nil || tc.ConnectionState().NegotiatedProtocol != http2.NextProtoTLS {
		return
	}
	received := map[uint32]int64{} // body bytes by stream
	_ = ServeFrames(tc, func(fr *http2.Framer, f http2.Frame) bool {
		if sent {
			return true
		}
		var refuse bool
		switch f := f.(type) {
		case *http2.HeadersFrame:
			refuse = f.StreamEnded() // no body to wait for
		case *http2.DataFrame:
			id := f.Header().StreamID
			received[id] += int64(len(f.Data()))
			refuse = f.StreamEnded() || received[id] > l.after
			if n := f.Header().Length; !refuse && n > 0 {
				// Give back the window the frame took, padding included,
				// so that the client can send past RefuseAfter.
				if fr.WriteWindowUpdate(0, n) != nil || fr.WriteWindowUpdate(id, n) != nil {
					return false
				}
			}
		}
		if !refuse {
			return true
		}
		sent = true
		l.s.goaways.Add(1)
		return fr.WriteGoAway(0, http2.ErrCodeNo, nil) == nil
	})
}
