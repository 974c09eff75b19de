package http3_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	h3qlog "github.com/quic-go/quic-go/http3/qlog"
	"github.com/quic-go/quic-go/qlogwriter"

	"github.com/teebody/teebody/internal/proxytest/testcert"
)

// loopback is where every server and client of these tests binds.
var loopback = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}

// shutdownGrace bounds a graceful Shutdown. Clients close a connection as
// soon as its last request is done after a GOAWAY, so it is never reached
// unless something hangs.
const shutdownGrace = 10 * time.Second

// testCert returns a self-signed certificate for loopback and a pool that
// trusts it, made once per test binary.
func testCert(testing.TB) (tls.Certificate, *x509.CertPool) { return testcert.Loopback() }

// upstream is an HTTP/3 service on one UDP socket whose http3.Server can be
// replaced while it serves. One quic.Transport and one quic.Listener live as
// long as the upstream; each accepted connection goes to the server current
// at the time (Server.ServeQUICConn). restart makes a new server current
// and shuts the old one down gracefully, so the old server's connections get
// a GOAWAY while new connections already reach the new one: no datagram and
// no handshake is lost, and only the GOAWAY can cost a request.
type upstream struct {
	t       testing.TB
	handler http.Handler
	pc      *net.UDPConn
	tr      *quic.Transport
	ln      *quic.Listener
	addr    string // host:port

	// goaways receives a value each time a server of this upstream has
	// decided to send a GOAWAY on a connection: from then on, it rejects
	// every new stream of that connection with H3_REQUEST_REJECTED. Only
	// with traced; nil otherwise.
	goaways chan struct{}

	// entered maps a connection being handed to a server to a channel that
	// the server's ConnContext closes: then ServeQUICConn has counted the
	// connection, and a Shutdown of that server waits for it.
	entered sync.Map // *quic.Conn -> chan struct{}

	mu      sync.Mutex // guards cur and servers, and serializes hand-overs with restarts
	cur     *http3.Server
	servers []*http3.Server // every server made, for stop

	// handed holds the remote address of every connection handed to a
	// server so far; handedNow is closed and replaced on each addition.
	handedMu  sync.Mutex
	handed    map[string]bool
	handedNow chan struct{}

	wg       sync.WaitGroup // the accept loop, ServeQUICConn calls, shutdowns
	loopDone chan struct{}
}

// newUpstream starts an upstream serving h on 127.0.0.1. With traced, it
// reports each GOAWAY decision on u.goaways (a qlog tracer, quic-go's own
// hook, sees the frame as the server creates it). Cleanup stops it.
func newUpstream(t testing.TB, h http.Handler, traced bool) *upstream {
	t.Helper()
	cert, _ := testCert(t)
	pc, err := net.ListenUDP("udp", loopback)
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{t: t, handler: h, pc: pc, tr: &quic.Transport{Conn: pc}, addr: pc.LocalAddr().String(),
		loopDone: make(chan struct{}), handed: make(map[string]bool), handedNow: make(chan struct{})}
	qconf := &quic.Config{}
	if traced {
		u.goaways = make(chan struct{}, 64)
		qconf.Tracer = func(context.Context, bool, quic.ConnectionID) qlogwriter.Trace { return goawayTrace(u.goaways) }
	}
	tlsConf := http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}})
	u.ln, err = u.tr.Listen(tlsConf, qconf)
	if err != nil {
		pc.Close()
		t.Fatal(err)
	}
	u.mu.Lock()
	u.cur = u.newServer()
	u.mu.Unlock()
	u.wg.Add(1)
	go u.acceptLoop()
	t.Cleanup(u.stop)
	return u
}

// newServer makes a server and adds it to u.servers; u.mu must be held.
func (u *upstream) newServer() *http3.Server {
	s := &http3.Server{
		Handler: u.handler,
		ConnContext: func(ctx context.Context, c *quic.Conn) context.Context {
			if ch, ok := u.entered.LoadAndDelete(c); ok {
				close(ch.(chan struct{}))
			}
			return ctx
		},
	}
	u.servers = append(u.servers, s)
	return s
}

func (u *upstream) acceptLoop() {
	defer u.wg.Done()
	defer close(u.loopDone)
	for {
		conn, err := u.ln.Accept(context.Background())
		if err != nil {
			return // the listener is closed
		}
		u.handOver(conn)
	}
}

// handOver gives conn to the current server, and returns once that server
// has counted it, so that a restart cannot slip in between (ServeQUICConn
// checks that its server is open, then counts the connection, without one
// lock over both).
func (u *upstream) handOver(conn *quic.Conn) {
	entered := make(chan struct{})
	u.entered.Store(conn, entered)
	u.mu.Lock()
	defer u.mu.Unlock()
	s := u.cur
	served := make(chan struct{})
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		defer close(served)
		if err := s.ServeQUICConn(conn); errors.Is(err, http.ErrServerClosed) {
			conn.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "")
		}
	}()
	select {
	case <-entered:
	case <-served:
		u.entered.Delete(conn)
	}
	u.handedMu.Lock()
	u.handed[conn.RemoteAddr().String()] = true
	close(u.handedNow)
	u.handedNow = make(chan struct{})
	u.handedMu.Unlock()
}

// waitHanded waits until the connection from the client address a has been
// handed to a server: a client's handshake can be done before the server's.
func (u *upstream) waitHanded(a net.Addr) {
	u.t.Helper()
	timeout := time.NewTimer(shutdownGrace)
	defer timeout.Stop()
	for {
		u.handedMu.Lock()
		ok, now := u.handed[a.String()], u.handedNow
		u.handedMu.Unlock()
		if ok {
			return
		}
		select {
		case <-now:
		case <-timeout.C:
			u.t.Fatalf("the upstream never got the connection from %v", a)
		}
	}
}

// restart makes a new server current and shuts the old one down
// gracefully. The returned channel is closed once the old server's
// Shutdown has returned: every connection it had is closed then.
func (u *upstream) restart() <-chan struct{} {
	u.mu.Lock()
	next := u.newServer()
	old := u.cur
	u.cur = next
	u.mu.Unlock()
	done := make(chan struct{})
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := old.Shutdown(ctx); err != nil {
			u.t.Errorf("graceful Shutdown of an upstream: %v", err)
		}
	}()
	return done
}

// stop closes the listener and every server, and waits for every goroutine
// the upstream started. The clients are gone by then (a test's Cleanup runs
// the client's first), and may have left connections without a word, which
// a graceful Shutdown would wait for.
func (u *upstream) stop() {
	u.ln.Close()
	<-u.loopDone
	u.mu.Lock()
	servers := u.servers
	u.mu.Unlock()
	for _, s := range servers {
		s.Close()
	}
	u.wg.Wait()
	u.tr.Close()
	u.pc.Close()
}

// goawayTrace is a qlog trace that reports each GOAWAY frame an HTTP/3
// server creates; it ignores every other event.
type goawayTrace chan<- struct{}

func (g goawayTrace) AddProducer() qlogwriter.Recorder { return g }
func (g goawayTrace) Close() error                     { return nil }

func (g goawayTrace) RecordEvent(e qlogwriter.Event) {
	fc, ok := e.(h3qlog.FrameCreated)
	if !ok {
		return
	}
	switch fc.Frame.Frame.(type) {
	case h3qlog.GoAwayFrame, *h3qlog.GoAwayFrame:
		select {
		case g <- struct{}{}:
		default:
		}
	}
}

// gatedConn is a client's UDP socket whose incoming datagrams can be held
// back: while held, the client's QUIC stack sees nothing the server sends
// (a GOAWAY, a stream reset), and gets it all in order on release.
type gatedConn struct {
	net.PacketConn

	mu      sync.Mutex
	held    bool
	kicked  bool // release set a read deadline to wake a pending ReadFrom
	pending []datagram
}

// SetReadBuffer and SetWriteBuffer let quic-go size the socket's buffers,
// as it does for a *net.UDPConn.
func (g *gatedConn) SetReadBuffer(n int) error  { return g.PacketConn.(*net.UDPConn).SetReadBuffer(n) }
func (g *gatedConn) SetWriteBuffer(n int) error { return g.PacketConn.(*net.UDPConn).SetWriteBuffer(n) }

type datagram struct {
	b    []byte
	addr net.Addr
}

func (g *gatedConn) hold() {
	g.mu.Lock()
	g.held = true
	g.mu.Unlock()
}

func (g *gatedConn) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.held {
		return
	}
	g.held = false
	if len(g.pending) > 0 {
		g.kicked = true
		g.PacketConn.SetReadDeadline(time.Now())
	}
}

func (g *gatedConn) ReadFrom(p []byte) (int, net.Addr, error) {
	for {
		g.mu.Lock()
		if !g.held && len(g.pending) > 0 {
			d := g.pending[0]
			g.pending = g.pending[1:]
			g.mu.Unlock()
			return copy(p, d.b), d.addr, nil
		}
		g.mu.Unlock()
		n, addr, err := g.PacketConn.ReadFrom(p)
		g.mu.Lock()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() && g.kicked {
				g.kicked = false
				g.PacketConn.SetReadDeadline(time.Time{})
				g.mu.Unlock()
				continue
			}
			g.mu.Unlock()
			return n, addr, err
		}
		if g.held {
			g.pending = append(g.pending, datagram{append([]byte(nil), p[:n]...), addr})
			g.mu.Unlock()
			continue
		}
		g.mu.Unlock()
		return n, addr, nil
	}
}

// dialer dials each HTTP/3 connection from a UDP socket of its own on
// 127.0.0.1, a gatedConn, so that a test can hold back what one connection
// receives. Its Close closes every socket.
type dialer struct {
	mu    sync.Mutex
	conns map[string]*gatedConn // by local address
	trs   []*quic.Transport
	qcs   []*quic.Conn
	dials int
}

func (d *dialer) dial(ctx context.Context, addr string, tlsConf *tls.Config, conf *quic.Config) (*quic.Conn, error) {
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	pc, err := net.ListenUDP("udp", loopback)
	if err != nil {
		return nil, err
	}
	g := &gatedConn{PacketConn: pc}
	tr := &quic.Transport{Conn: g}
	d.mu.Lock()
	if d.conns == nil {
		d.conns = make(map[string]*gatedConn)
	}
	d.conns[pc.LocalAddr().String()] = g
	d.trs = append(d.trs, tr)
	d.dials++
	d.mu.Unlock()
	qc, err := tr.Dial(ctx, raddr, tlsConf, conf)
	if err == nil {
		d.mu.Lock()
		d.qcs = append(d.qcs, qc)
		d.mu.Unlock()
	}
	return qc, err
}

// gate returns the socket of the connection whose local address is a.
func (d *dialer) gate(a net.Addr) *gatedConn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conns[a.String()]
}

func (d *dialer) releaseAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, g := range d.conns {
		g.release()
	}
}

func (d *dialer) dialed() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dials
}

func (d *dialer) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	// Close each connection first, so that its server learns of it: a
	// Transport's Close drops its connections silently, and http3.Transport
	// no longer knows one it gave up after an error.
	for _, qc := range d.qcs {
		qc.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "")
	}
	for _, tr := range d.trs {
		tr.Close()
	}
	for _, g := range d.conns {
		g.release()
		g.Close()
	}
}

// newClient returns an http3.Transport that trusts the test certificate and
// dials through d. Cleanup closes both.
func newClient(t testing.TB, d *dialer) *http3.Transport {
	_, pool := testCert(t)
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Dial: d.dial}
	t.Cleanup(func() {
		tr.Close()
		d.Close()
	})
	return tr
}
