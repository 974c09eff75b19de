package connect_test

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// shutdownGrace bounds a graceful Shutdown. Clients finish their calls in
// milliseconds, so it is reached only if something hangs; a Shutdown that
// reaches it is counted as forced.
const shutdownGrace = 10 * time.Second

// proto is how the clients and servers of a test speak HTTP/2.
type proto int

const (
	h2  proto = iota // HTTP/2 over TLS
	h2c              // HTTP/2 without TLS, with prior knowledge
)

func (p proto) String() string { return [...]string{"h2", "h2c"}[p] }

// transport returns the plain client transport for p: net/http's, HTTP/2
// only (a bidi call needs it).
func (p proto) transport() *http.Transport {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	if p == h2 {
		_, pool := testCert()
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
		tr.Protocols.SetHTTP2(true)
	} else {
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	return tr
}

// upstream serves one loopback address through restarts. One goroutine
// accepts on the socket and hands each connection to the server current at
// that moment. restart makes a new server current, then shuts the old one
// down with http.Server.Shutdown, which closes only the old server's own
// listener. So no connection is refused or reset by a restart: the old
// server's graceful GOAWAY is all that a restart can cost a call.
type upstream struct {
	t        testing.TB
	proto    proto
	handler  http.Handler
	ln       net.Listener
	base     string // scheme://127.0.0.1:port
	loopDone chan struct{}

	mu      sync.Mutex
	cur     *server   // guarded by mu: the server new connections go to
	servers []*server // guarded by mu: every server made

	serving  sync.WaitGroup // Serve calls
	draining sync.WaitGroup // Shutdowns under way
	restarts atomic.Int64
	forced   atomic.Int64 // Shutdowns that reached shutdownGrace
	stopOnce sync.Once
}

// newUpstream serves h over p on 127.0.0.1. The test's cleanup stops it.
func newUpstream(t testing.TB, p proto, h http.Handler) *upstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	scheme := "https"
	if p == h2c {
		scheme = "http"
	}
	u := &upstream{t: t, proto: p, handler: h, ln: ln, base: scheme + "://" + ln.Addr().String(), loopDone: make(chan struct{})}
	u.cur = u.serve()
	go u.acceptLoop()
	t.Cleanup(u.stop)
	return u
}

// serve starts a new server on a listener of its own and returns it.
func (u *upstream) serve() *server {
	s := &server{addr: u.ln.Addr(), conns: make(chan net.Conn), closing: make(chan struct{}),
		pending: map[string]bool{}, settled: make(chan struct{})}
	s.srv = &http.Server{
		Handler:           u.handler,
		ConnState:         s.connState,
		ErrorLog:          log.New(io.Discard, "", 0),
		ReadHeaderTimeout: shutdownGrace,
	}
	u.mu.Lock()
	u.servers = append(u.servers, s)
	u.mu.Unlock()
	if u.proto == h2 {
		cert, _ := testCert()
		s.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}}
		u.serving.Go(func() { _ = s.srv.ServeTLS(s, "", "") })
	} else {
		s.srv.Protocols = new(http.Protocols)
		s.srv.Protocols.SetUnencryptedHTTP2(true)
		u.serving.Go(func() { _ = s.srv.Serve(s) })
	}
	return s
}

func (u *upstream) acceptLoop() {
	defer close(u.loopDone)
	for {
		c, err := u.ln.Accept()
		if err != nil {
			return // the socket is closed
		}
		u.mu.Lock()
		s := u.cur
		s.expect(c)
		u.mu.Unlock()
		select {
		case s.conns <- c:
		case <-s.closing: // only when the upstream stops
			s.settle(c.RemoteAddr().String())
			c.Close()
		}
	}
}

// restart makes a new server current and shuts the old one down in the
// background, as a rolling update does: the old server's connections get a
// GOAWAY while new connections already reach the new server.
func (u *upstream) restart() {
	next := u.serve()
	u.mu.Lock()
	old := u.cur
	u.cur = next
	u.mu.Unlock()
	u.restarts.Add(1)
	u.draining.Go(func() { u.shutdown(old) })
}

// shutdown shuts s down gracefully, and closes it after shutdownGrace.
// It first waits until every connection handed to s is known to its HTTP/2
// server: one that Shutdown's GOAWAY missed would be served on without one,
// until the grace ran out.
func (u *upstream) shutdown(s *server) {
	if !s.waitSettled(shutdownGrace) {
		u.t.Errorf("%s upstream: a connection handed to a server never started HTTP/2", u.proto)
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		u.forced.Add(1)
		s.srv.Close()
	}
}

// close shuts the current server down as restart does, closes the socket,
// and waits for every server to be done. The clients must have closed their
// idle connections first, which a graceful Shutdown waits for.
func (u *upstream) close() {
	u.stopOnce.Do(func() {
		u.ln.Close()
		<-u.loopDone
		u.mu.Lock()
		cur := u.cur
		u.mu.Unlock()
		u.draining.Go(func() { u.shutdown(cur) })
		u.draining.Wait()
		u.serving.Wait()
	})
}

// stop is the test's cleanup: after a test that stopped early, it closes
// every server at once rather than wait for their connections.
func (u *upstream) stop() {
	if u.t.Failed() {
		u.mu.Lock()
		servers := u.servers
		u.mu.Unlock()
		for _, s := range servers {
			s.srv.Close()
		}
	}
	u.close()
}

// server is one http.Server of an upstream, and the listener it serves:
// the connections that the upstream's accept loop hands it.
type server struct {
	srv       *http.Server
	addr      net.Addr
	conns     chan net.Conn
	closing   chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	pending map[string]bool // guarded by mu: handed connections, by remote address, not yet settled
	settled chan struct{}   // guarded by mu: closed and replaced when one settles
}

func (s *server) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.closing:
		return nil, net.ErrClosed
	}
}

func (s *server) Close() error {
	s.closeOnce.Do(func() { close(s.closing) })
	return nil
}

func (s *server) Addr() net.Addr { return s.addr }

// expect notes that c is about to be handed to s.
func (s *server) expect(c net.Conn) {
	s.mu.Lock()
	s.pending[c.RemoteAddr().String()] = true
	s.mu.Unlock()
}

// connState settles a connection once its HTTP/2 server has registered it
// (it reports StateActive after that) or once it is gone.
func (s *server) connState(c net.Conn, st http.ConnState) {
	if st != http.StateNew {
		s.settle(c.RemoteAddr().String())
	}
}

func (s *server) settle(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending[addr] {
		delete(s.pending, addr)
		close(s.settled)
		s.settled = make(chan struct{})
	}
}

// waitSettled waits until no connection handed to s is pending, for at
// most d, and reports whether none is.
func (s *server) waitSettled(d time.Duration) bool {
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	for {
		s.mu.Lock()
		n, settled := len(s.pending), s.settled
		s.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-settled:
		case <-timeout.C:
			return false
		}
	}
}
