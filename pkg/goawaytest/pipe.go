package goawaytest

import (
	"crypto/tls"
	"net"
	"sync"
)

// pipeListener is the http.Server's listener: each relay dials it for an
// in-memory connection to the server.
type pipeListener struct {
	addr  net.Addr // the Server's loopback address
	conns chan net.Conn
	done  chan struct{} // closed by Close
	once  sync.Once
}

func newPipeListener(addr net.Addr) *pipeListener {
	return &pipeListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return l.addr }

// dial returns the relay's end of a new connection to the server, whose
// end says that its peer is remote and carries the client connection's TLS
// state, nil for plain text. It fails once the listener is closed.
func (l *pipeListener) dial(remote net.Addr, state *tls.ConnectionState) (net.Conn, error) {
	relay, server := net.Pipe()
	select {
	case l.conns <- &pipeConn{Conn: server, local: l.addr, remote: remote, tls: state}:
		return relay, nil
	case <-l.done:
		relay.Close()
		server.Close()
		return nil, net.ErrClosed
	}
}

// pipeConn is the server's end of an in-memory connection, with the client
// connection's addresses and TLS state.
type pipeConn struct {
	net.Conn
	local, remote net.Addr
	tls           *tls.ConnectionState
}

func (c *pipeConn) LocalAddr() net.Addr  { return c.local }
func (c *pipeConn) RemoteAddr() net.Addr { return c.remote }
