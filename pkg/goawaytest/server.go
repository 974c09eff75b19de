package goawaytest

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/teebody/teebody/internal/proxytest/testcert"
	"golang.org/x/net/http2"
)

// A Server is an HTTP/2 server listening on a loopback address, for use in
// tests. Once it is started, its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL, of the form http://ipaddr:port (plain-text HTTP/2
	// with prior knowledge) or https://ipaddr:port (HTTP/2 over TLS), with
	// no trailing slash. It is set by Start and StartTLS.
	URL string

	// Config may be changed after NewUnstartedServer and before Start or
	// StartTLS are called. Its Handler is the handler that the Server serves
	// and counts. Start and StartTLS wrap its Handler and ConnContext, and
	// set its Protocols to plain-text HTTP/2 alone.
	Config *http.Server

	// TLS is the client connections' TLS configuration. It may be set after
	// NewUnstartedServer and before StartTLS is called. StartTLS then uses a
	// copy of it. The copy offers HTTP/2 in NextProtos if that is nil, and
	// holds a certificate for localhost, 127.0.0.1 and ::1 if it has no
	// certificate. It is nil for a plain-text server.
	TLS *tls.Config

	opts    options
	useTLS  bool             // StartTLS started it; set by start
	ln      net.Listener     // the loopback listener; set by start, unless a test of the package set it
	pipes   *pipeListener    // Config's listener; set by start
	backend *httptest.Server // serves Config on pipes; set by start
	client  *http.Client     // set by start
	cert    *x509.Certificate

	mu     sync.Mutex
	conns  map[*conn]struct{} // guarded by mu: the connections being relayed
	closed bool               // guarded by mu: Close was called
	wg     sync.WaitGroup     // the accepting goroutine and the relays

	hmu      sync.Mutex
	stopped  bool           // guarded by hmu: no handler may start
	handlers sync.WaitGroup // running handlers; Add only under hmu while !stopped

	requests, refusals, goaways atomic.Int64

	ranMu sync.Mutex
	ran   map[string]int64 // guarded by ranMu: handler runs by method and request URI
}

// NewServer starts and returns a new Server that serves plain-text HTTP/2
// with prior knowledge. The caller should call Close when finished, to shut
// it down.
func NewServer(handler http.Handler, opts ...Option) *Server {
	s := NewUnstartedServer(handler, opts...)
	s.Start()
	return s
}

// NewTLSServer starts and returns a new Server that serves HTTP/2 over TLS.
// The caller should call Close when finished, to shut it down.
func NewTLSServer(handler http.Handler, opts ...Option) *Server {
	s := NewUnstartedServer(handler, opts...)
	s.StartTLS()
	return s
}

// NewUnstartedServer returns a new Server but doesn't start it. After
// changing its configuration, the caller should call Start or StartTLS,
// and Close when finished.
func NewUnstartedServer(handler http.Handler, opts ...Option) *Server {
	s := &Server{Config: &http.Server{Handler: handler}, conns: map[*conn]struct{}{}, ran: map[string]int64{}}
	for _, o := range opts {
		if o.apply != nil {
			o.apply(&s.opts)
		}
	}
	return s
}

// Start starts a server from NewUnstartedServer that serves plain-text
// HTTP/2 with prior knowledge.
func (s *Server) Start() {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	s.start(false, tr)
}

// StartTLS starts a server from NewUnstartedServer that serves HTTP/2 over
// TLS.
func (s *Server) StartTLS() {
	if s.URL != "" {
		panic("goawaytest: Server already started")
	}
	cfg := new(tls.Config)
	if s.TLS != nil {
		cfg = s.TLS.Clone()
	}
	if cfg.NextProtos == nil {
		cfg.NextProtos = []string{http2.NextProtoTLS}
	}
	if len(cfg.Certificates) == 0 {
		cert, _ := testcert.Loopback()
		cfg.Certificates = []tls.Certificate{cert}
	}
	leaf, err := x509.ParseCertificate(cfg.Certificates[0].Certificate[0])
	if err != nil {
		panic(fmt.Sprintf("goawaytest: NewTLSServer: %v", err))
	}
	s.TLS, s.cert = cfg, leaf
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	s.start(true, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true})
}

func (s *Server) start(useTLS bool, tr *http.Transport) {
	if s.URL != "" {
		panic("goawaytest: Server already started")
	}
	ln := s.ln
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			if ln, err = net.Listen("tcp6", "[::1]:0"); err != nil {
				panic(fmt.Sprintf("goawaytest: failed to listen on a port: %v", err))
			}
		}
	}
	s.ln, s.client, s.useTLS, s.URL = ln, &http.Client{Transport: tr}, useTLS, "http://"+ln.Addr().String()
	if useTLS {
		s.URL = "https://" + ln.Addr().String()
	}
	s.pipes = newPipeListener(ln.Addr())
	s.Config.Handler = s.count(s.Config.Handler)
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Config.ConnContext = withTLSState(s.Config.ConnContext)
	s.backend = &httptest.Server{Listener: s.pipes, Config: s.Config}
	s.backend.Start()
	s.wg.Add(1)
	go s.accept()
}

// accept hands each connection accepted to a relay, until the listener is
// closed. It retries a temporary error after a pause, as http.Server.Serve
// does, from 5 milliseconds up to a second.
func (s *Server) accept() {
	defer s.wg.Done()
	var pause time.Duration
	for {
		raw, err := s.ln.Accept()
		//lint:ignore SA1019 deprecated, but what http.Server.Serve checks: EMFILE and the like
		if ne, ok := err.(net.Error); ok && ne.Temporary() {
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			time.Sleep(pause)
			continue
		}
		if err != nil {
			return
		}
		pause = 0
		c := &conn{s: s, raw: raw, last: maxStreamID, open: map[uint32]struct{}{}}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			raw.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			c.run()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Close shuts down the server: it closes its listener and every
// connection, and blocks until every handler has returned and every
// goroutine of the server has exited. It also closes the idle connections
// of the client that Client returns. Close may be called more than once;
// Stats and Ran keep their counts after it.
func (s *Server) Close() {
	s.mu.Lock()
	if !s.closed && s.ln != nil {
		s.closed = true
		s.ln.Close()
		for c := range s.conns {
			c.shut()
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
	if s.backend == nil {
		return
	}
	s.backend.Close() // every connection to it is closed: it waits for them to end
	s.hmu.Lock()
	s.stopped = true // no handler starts now: Wait has all that will run
	s.hmu.Unlock()
	s.handlers.Wait()
	s.client.CloseIdleConnections()
}

// Client returns an HTTP client configured for making requests to the
// server. It trusts the server's certificate and speaks HTTP/2 to it, over
// TLS or in plain text as the server does. Start and StartTLS set it, and
// Close closes its idle connections.
func (s *Server) Client() *http.Client { return s.client }

// Certificate returns the certificate used by the server, or nil if the
// server doesn't use TLS.
func (s *Server) Certificate() *x509.Certificate { return s.cert }
