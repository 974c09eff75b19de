package proxytest

import (
	"bufio"
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
)

// Options says how a Server speaks and which of its responses end their
// connection: those that Every or Chance picks. The zero value serves HTTP/2
// over TLS and never ends one.
type Options struct {
	// HTTP1 serves plain HTTP/1.1 instead of HTTP/2 over TLS.
	HTTP1 bool
	// Every ends the connection after every Every-th successful (2xx)
	// response; 0 never does.
	Every int64
	// Chance ends the connection after each successful response with this
	// probability, drawn from a fixed seed as the API server's
	// --goaway-chance draws it; 0 never does.
	Chance float64
	// HTTP2, if set, configures the server's HTTP/2 (its flow-control
	// windows, for one): http.Server.HTTP2.
	HTTP2 *http.HTTP2Config
	// RefuseEvery > 0 makes the first connection, and then one in every
	// RefuseEvery, refuse its streams with a GOAWAY as soon as the client
	// has sent the first one's headers and a piece of its body, so that the
	// client must send them again, every time (HTTP/2 only; counted in
	// Goaways). A picked connection that the client closes before it sends
	// a stream passes its turn on to the next connection. 1 refuses every
	// connection: no request gets through. math.MaxInt64 refuses once: a
	// test that counts one GOAWAY needs it, since a client may dial and drop
	// connections that shift which ones a smaller value picks.
	RefuseEvery int64
	// RefuseAfter makes a connection that RefuseEvery picks wait, before it
	// refuses, until the client has sent more than RefuseAfter bytes of a
	// stream's body, or all of it; it grants the flow-control window that
	// takes. A test that needs the client to have read past a limit when the
	// refusal lands (a body no longer kept, say) sets it to that limit: the
	// refusal then never comes early, however busy the machine.
	RefuseAfter int64
	// ErrorLog, if set, gets the server's error log; nil discards it.
	ErrorLog *log.Logger
}

// Server is an httptest.Server on loopback which ends the connection after the successful responses that its
// Options pick (a response counts once its handler writes a status or a
// body):
//
//   - over HTTP/2 it sets "Connection: close" on the response, and Go's
//     HTTP/2 server answers that with a graceful GOAWAY: streams the client
//     opens after it are refused, and the client may send them again on a
//     new connection only if it can replay their bodies;
//   - over HTTP/1.1 it replaces the response by an empty one with the same
//     status that promises keep-alive, then closes the connection, so that
//     the client's next request on it races with its noticing.
//
// Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server
	opts Options

	responses atomic.Int64 // successful responses so far
	goaways   atomic.Int64 // connections ended

	mu  sync.Mutex
	rng *rand.Rand // guarded by mu

	refusing *refusingListener // nil unless Options.RefuseEvery; closed with the server's listener
}

// NewServer starts a Server that serves h. Close it when done.
func NewServer(h http.Handler, opts Options) *Server {
	s := &Server{opts: opts, rng: rand.New(rand.NewPCG(1, 2))}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&endingWriter{ResponseWriter: w, s: s, h1: r.ProtoMajor == 1}, r)
	}))
	s.Config.ErrorLog = cmp.Or(opts.ErrorLog, QuietLog())
	s.Config.HTTP2 = opts.HTTP2
	if opts.HTTP1 {
		s.Start()
		return s
	}
	if opts.RefuseEvery > 0 {
		s.refusing = &refusingListener{Listener: s.Listener, s: s, every: opts.RefuseEvery, after: opts.RefuseAfter, conns: map[net.Conn]bool{}}
		s.Listener = s.refusing
	}
	s.EnableHTTP2 = true
	s.StartTLS()
	return s
}

// Goaways returns how many connections the server has ended so far.
func (s *Server) Goaways() int64 { return s.goaways.Load() }

// Transport returns a new client transport to s: trusting its certificate
// and speaking HTTP/2 when s serves TLS, keeping up to 64 idle connections,
// without compression. The caller closes its idle connections when done.
func (s *Server) Transport() *http.Transport {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	if s.TLS != nil {
		pool := x509.NewCertPool()
		pool.AddCert(s.Certificate())
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
		tr.ForceAttemptHTTP2 = true
	}
	return tr
}

// endConnection decides whether the successful response being written ends
// its connection, and counts it if so.
func (s *Server) endConnection() bool {
	n := s.responses.Add(1)
	end := s.opts.Every > 0 && n%s.opts.Every == 0
	if !end && s.opts.Chance > 0 {
		s.mu.Lock()
		end = s.rng.Float64() < s.opts.Chance
		s.mu.Unlock()
	}
	if end {
		s.goaways.Add(1)
	}
	return end
}

// endingWriter decides, when the handler writes its status, whether the
// response ends the connection. It is owned by the handler's goroutine.
type endingWriter struct {
	http.ResponseWriter
	s       *Server
	h1      bool
	decided bool // a final status was written
	closed  bool // the connection was hijacked and closed: drop the rest
}

func (w *endingWriter) WriteHeader(code int) {
	if w.closed {
		return
	}
	if !w.decided && code >= 200 {
		w.decided = true
		if code < 300 && w.s.endConnection() {
			if w.h1 && w.closeBehind(code) {
				return
			}
			w.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *endingWriter) Write(p []byte) (int, error) {
	if !w.decided {
		w.WriteHeader(http.StatusOK)
	}
	if w.closed {
		return 0, http.ErrHijacked
	}
	return w.ResponseWriter.Write(p)
}

// Flush sends what was written so far, deciding first if the status was
// not written yet.
func (w *endingWriter) Flush() {
	if !w.decided {
		w.WriteHeader(http.StatusOK)
	}
	if !w.closed {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Hijack hands the connection to the handler (HTTP/1 only); the response
// is then the handler's own and ends nothing.
func (w *endingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.closed {
		return nil, nil, http.ErrHijacked
	}
	w.decided = true
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *endingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// closeBehind answers an empty response with status code that keeps the
// connection alive, then closes the connection. It reports false, having
// done nothing, if the connection cannot be taken over.
func (w *endingWriter) closeBehind(code int) bool {
	conn, buf, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return false
	}
	w.closed = true
	_, _ = buf.WriteString("HTTP/1.1 " + strconv.Itoa(code) + " " + http.StatusText(code) + "\r\nContent-Length: 0\r\n\r\n")
	_ = buf.Flush()
	_ = conn.Close()
	return true
}
