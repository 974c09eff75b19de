package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/internal/rusage"
)

const (
	kib = 1 << 10
	mib = 1 << 20
)

// Transport kinds, in the order the tables show them: the speed limit first,
// then the library, then the naive baseline.
const (
	kindPlain   = "plain"
	kindTeebody = "teebody"
	kindReadAll = "readall"
	// kindAdaptive is teebody in adaptive mode (transport.Config.Adaptive).
	kindAdaptive = "adaptive"
)

// epoch is the origin of every timestamp the harness exchanges between the
// client and the upstream: both run in this process, so time.Since(epoch)
// uses the monotonic clock on both sides.
var epoch = time.Now()

func now() time.Duration { return time.Since(epoch) }

// cpuTime is the CPU time (user and system) this process has used so far,
// or 0 where it is not measured: then the cpu-s metric reads 0.
func cpuTime() time.Duration { return rusage.CPU() }

// switches returns this process's voluntary and involuntary context switches
// so far, or 0 where they are not measured.
func switches() (voluntary, involuntary int64) { return rusage.Switches() }

// pageFaults returns this process's minor page faults so far, or 0 where
// they are not measured.
func pageFaults() int64 { return rusage.PageFaults() }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// payload is 16 MiB of seeded pseudo-random bytes; a body of n bytes is its
// first n bytes. Incompressible, so no layer can cheat on it.
var payload = sync.OnceValue(func() []byte {
	r := rand.NewChaCha8([32]byte{'t', 'e', 'e', 'b', 'o', 'd', 'y'})
	p := make([]byte, 16*mib)
	_, _ = r.Read(p)
	return p
})

var (
	crcMu    sync.Mutex
	crcCache = map[int]uint32{} // guarded by crcMu
)

// expectedCRC is the CRC-32C of the first size bytes of payload.
func expectedCRC(size int) uint32 {
	crcMu.Lock()
	defer crcMu.Unlock()
	c, ok := crcCache[size]
	if !ok {
		c = crc32.Checksum(payload()[:size], castagnoli)
		crcCache[size] = c
	}
	return c
}

// upstream is the TLS HTTP/2 server the proxy forwards to: a stand-in for a
// Kubernetes API server started with --goaway-chance.
type upstream struct {
	srv *proxytest.Server

	requests   atomic.Int64 // handler calls
	started    atomic.Int64 // request bodies whose first byte arrived
	bodyErrors atomic.Int64 // request bodies that ended in an error
	// progress is poked when started moves (the stack's progress channel).
	progress chan struct{}
}

var upstreamBufs = sync.Pool{New: func() any { b := make([]byte, 32*kib); return &b }}

// statusOK is the response body: a small Kubernetes Status, never empty
// (an empty response is a corner case of its own: docs/design.md, fact 4).
const statusOK = `{"kind":"Status","apiVersion":"v1","status":"Success"}` + "\n"

func newUpstream(goawayChance float64) *upstream {
	u := &upstream{}
	u.srv = proxytest.NewServer(http.HandlerFunc(u.serve), proxytest.Options{Chance: goawayChance})
	return u
}

// serve drains and checksums the body, then answers with its length, its
// CRC-32C and when its first and last bytes arrived (since epoch).
func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	u.requests.Add(1)
	bp := upstreamBufs.Get().(*[]byte)
	defer upstreamBufs.Put(bp)
	buf := *bp
	h := crc32.New(castagnoli)
	var n int64
	var first, last time.Duration
	for {
		m, err := r.Body.Read(buf)
		if m > 0 {
			if n == 0 {
				first = now()
				u.started.Add(1)
				poke(u.progress)
			}
			n += int64(m)
			h.Write(buf[:m])
			last = now()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			u.bodyErrors.Add(1)
			http.Error(w, "upstream: reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("X-Body-Length", strconv.FormatInt(n, 10))
	hdr.Set("X-Body-Crc32c", strconv.FormatUint(uint64(h.Sum32()), 10))
	hdr.Set("X-First-Byte-Ns", strconv.FormatInt(int64(first), 10))
	hdr.Set("X-Last-Byte-Ns", strconv.FormatInt(int64(last), 10))
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, statusOK)
}

// heldFunc reports the request-body bytes a transport holds right now.
type heldFunc func() int64

// underTest is a transport under test, with what the harness reads from it.
type underTest struct {
	rt http.RoundTripper
	// held and peak report retained body bytes; nil when the transport
	// retains nothing (plain).
	held, peak heldFunc
	// total is the budget behind held, 0 when there is none.
	total int64
	// errorHandler answers the proxy's transport errors; nil: 502.
	errorHandler func(http.ResponseWriter, *http.Request, error)
	// drain, when set, waits until the transport released every body it
	// holds (transport.Transport.Drain).
	drain func(context.Context) error
	// stats describes the transport's counters for logs; nil if none.
	stats func() string
}

// stackConfig describes one stack.
type stackConfig struct {
	kind         string
	goawayChance float64
	frontH2      bool  // TLS HTTP/2 between client and proxy; else cleartext HTTP/1.1
	handWritten  bool  // a hand-written forwarding handler instead of httputil.ReverseProxy
	totalBytes   int64 // teebody budget; 0: the transport's default
	perRequest   int64 // teebody per-request limit; 0: the transport's default
	adaptive     bool  // teebody in adaptive mode (transport.Config.Adaptive)
}

// stack is client → ReverseProxy → upstream, all on loopback.
type stack struct {
	cfg      stackConfig
	up       *upstream
	inner    *http.Transport // the proxy's connection to the upstream
	ut       underTest
	closes   closeRecorder
	front    *httptest.Server
	clientTr *http.Transport
	sender   // the client's side: uploads to front

	// in counts the proxy's reads of its inbound connections (from the
	// client), as the server sees them; out the client's writes to them
	// (over HTTP/1.1 only).
	in, out ioCount
	// progress is poked whenever in, out or the upstream's started move,
	// so that settle waits for events instead of polling.
	progress chan struct{}

	proxyErrors atomic.Int64
	errMu       sync.Mutex
	errSample   []string // guarded by errMu; the first few proxy errors
}

// newStack starts a stack; the caller must call close.
func newStack(tb testing.TB, cfg stackConfig) *stack {
	tb.Helper()
	s := &stack{cfg: cfg, up: newUpstream(cfg.goawayChance), progress: make(chan struct{}, 1)}
	s.up.progress, s.in.progress, s.out.progress = s.progress, s.progress, s.progress
	s.inner = s.up.srv.Transport()
	ut, err := newUnderTest(cfg, s.inner)
	if err != nil {
		s.up.srv.Close()
		tb.Fatal(err)
	}
	s.ut = ut
	s.closes.next = ut.rt
	s.closes.changed = make(chan struct{}, 1)
	upURL, err := url.Parse(s.up.srv.URL)
	if err != nil {
		tb.Fatal(err)
	}
	var h http.Handler = newReverseProxy(upURL, &s.closes, s.proxyError)
	if cfg.handWritten {
		h = &proxytest.HandProxy{Target: upURL, Transport: &s.closes, ErrorHandler: s.proxyError}
	}
	s.front = httptest.NewUnstartedServer(h)
	s.front.Listener = countingListener{Listener: s.front.Listener, reads: &s.in}
	s.front.Config.ErrorLog = proxytest.QuietLog()
	if cfg.frontH2 {
		s.front.EnableHTTP2 = true
		s.front.StartTLS()
		pool := x509.NewCertPool()
		pool.AddCert(s.front.Certificate())
		s.clientTr = &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: pool},
			ForceAttemptHTTP2:   true,
			MaxIdleConnsPerHost: 64,
			DisableCompression:  true,
		}
	} else {
		s.front.Start()
		s.clientTr = &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
		var d net.Dialer
		s.clientTr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{Conn: c, writes: &s.out}, nil
		}
	}
	s.sender = sender{url: s.front.URL, hc: &http.Client{Transport: s.clientTr}}
	return s
}

// newReverseProxy is the proxy under test: an httputil.ReverseProxy that
// sends every request to up through rt, its errors to errorHandler.
func newReverseProxy(up *url.URL, rt http.RoundTripper,
	errorHandler func(http.ResponseWriter, *http.Request, error)) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite:      func(pr *httputil.ProxyRequest) { pr.SetURL(up) },
		Transport:    rt,
		ErrorLog:     proxytest.QuietLog(),
		ErrorHandler: errorHandler,
	}
}

func (s *stack) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	s.proxyErrors.Add(1)
	s.errMu.Lock()
	if len(s.errSample) < 3 {
		s.errSample = append(s.errSample, err.Error())
	}
	s.errMu.Unlock()
	if s.ut.errorHandler != nil {
		s.ut.errorHandler(w, r, err)
		return
	}
	w.WriteHeader(http.StatusBadGateway)
}

func (s *stack) errors() []string {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return slices.Clone(s.errSample)
}

// close stops every server and drops every idle connection. After it
// returns, every proxy handler has returned (httptest.Server.Close waits).
func (s *stack) close() {
	s.clientTr.CloseIdleConnections()
	s.front.Close()
	s.inner.CloseIdleConnections()
	s.up.srv.Close()
}

// held reports the bytes the transport under test holds now.
func (s *stack) held() int64 {
	if s.ut.held == nil {
		return 0
	}
	return s.ut.held()
}

func (s *stack) peak() int64 {
	if s.ut.peak == nil {
		return 0
	}
	return s.ut.peak()
}

// outcome classifies one client operation.
type outcome int

const (
	ok         outcome = iota
	retryLater         // 429 from the proxy: the client is told to retry (client-go does)
	failed             // any other status or a transport error
	corrupt            // 200 but the upstream saw other bytes than were sent
)

// result is one client operation as the client and the upstream saw it.
type result struct {
	outcome outcome
	latency time.Duration // client send until the response body was read and closed
	first   time.Duration // client send until the upstream read the first byte
	last    time.Duration // client send until the upstream read the last byte
	err     error
}

// A sender is the client: it uploads bodies to a proxy at url through hc.
// Its methods are safe for concurrent use.
type sender struct {
	url string // the proxy's base URL
	hc  *http.Client
}

// do sends size bytes of payload (from body, or a plain reader when nil).
// first and last in the result are meaningful only when the upstream runs
// in this process (they are measured from epoch on both sides).
func (s sender) do(ctx context.Context, size int, body io.Reader) result {
	if body == nil {
		body = bytes.NewReader(payload()[:size])
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut,
		s.url+"/api/v1/namespaces/bench/configmaps/cm", body)
	if err != nil {
		return result{outcome: failed, err: err}
	}
	req.ContentLength = int64(size)
	if _, ok := body.(chunkedBody); ok {
		req.ContentLength = -1 // sent with Transfer-Encoding: chunked
	}
	req.Header.Set("Content-Type", "application/json")
	t0 := now()
	resp, err := s.hc.Do(req)
	if err != nil {
		return result{outcome: failed, latency: now() - t0, err: err}
	}
	respBody, err := io.ReadAll(io.LimitReader(resp.Body, 4*kib))
	resp.Body.Close()
	r := result{latency: now() - t0}
	switch {
	case err != nil:
		r.outcome, r.err = failed, err
	case resp.StatusCode == http.StatusTooManyRequests:
		r.outcome, r.err = retryLater, fmt.Errorf("status %d: %.200s", resp.StatusCode, respBody)
	case resp.StatusCode != http.StatusOK:
		r.outcome, r.err = failed, fmt.Errorf("status %d: %.200s", resp.StatusCode, respBody)
	default:
		n, _ := strconv.Atoi(resp.Header.Get("X-Body-Length"))
		c, _ := strconv.ParseUint(resp.Header.Get("X-Body-Crc32c"), 10, 32)
		if n != size || uint32(c) != expectedCRC(size) {
			r.outcome, r.err = corrupt, fmt.Errorf("upstream saw %d bytes (crc %08x), sent %d (crc %08x)",
				n, c, size, expectedCRC(size))
			break
		}
		first, _ := strconv.ParseInt(resp.Header.Get("X-First-Byte-Ns"), 10, 64)
		last, _ := strconv.ParseInt(resp.Header.Get("X-Last-Byte-Ns"), 10, 64)
		r.first, r.last = time.Duration(first)-t0, time.Duration(last)-t0
	}
	return r
}

// chunkedBody is a body of unknown length: the client sends it chunked, in
// pieces of io.Copy's 32 KiB buffer.
type chunkedBody struct{ io.Reader }

// An ioCount counts the reads or the writes of connections, and their bytes.
// Its methods are safe for concurrent use.
type ioCount struct {
	ops, bytes atomic.Int64
	progress   chan struct{} // poked after each add, unless nil; set before traffic
}

func (c *ioCount) add(n int) {
	c.ops.Add(1)
	c.bytes.Add(int64(n))
	poke(c.progress)
}

// poke wakes the one goroutine that may wait on c, if it waits, to look at
// the counters again; it never blocks (c has room for one wake-up, and a nil
// c takes none).
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (c *ioCount) reset() {
	c.ops.Store(0)
	c.bytes.Store(0)
}

// kibPerOp is the mean size of the reads or writes counted, in KiB.
func (c *ioCount) kibPerOp() float64 {
	n := c.ops.Load()
	if n == 0 {
		return 0
	}
	return float64(c.bytes.Load()) / float64(n) / kib
}

// countingListener counts the reads of the connections it accepts.
type countingListener struct {
	net.Listener
	reads *ioCount
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, reads: l.reads}, nil
}

// countingConn counts its reads into reads and its writes into writes,
// each unless nil.
type countingConn struct {
	net.Conn
	reads, writes *ioCount
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.reads != nil {
		c.reads.add(n)
	}
	return n, err
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if c.writes != nil {
		c.writes.add(n)
	}
	return n, err
}

// resetCounts zeroes the read and write counters.
func (s *stack) resetCounts() {
	s.in.reset()
	s.out.reset()
}

// kibPerWrite is the mean size of the client's writes since the last
// resetCounts, in KiB.
func (s *stack) kibPerWrite() float64 { return s.out.kibPerOp() }

// kibPerRead is the mean size of the proxy's inbound reads since the last
// resetCounts, in KiB.
func (s *stack) kibPerRead() float64 { return s.in.kibPerOp() }

// closeRecorder sits between the ReverseProxy and the transport under test
// and records when the proxy closes each response body: the moment the
// library is told that the request is over.
type closeRecorder struct {
	next http.RoundTripper

	closed    atomic.Int64 // response bodies closed
	lastClose atomic.Int64 // when the latest Close returned, ns since epoch
	// onClose, when set, runs after each Close returns, with the number of
	// bodies closed so far. Set before traffic starts.
	onClose func(n int64)
	// changed is poked after each Close (made by newStack).
	changed chan struct{}
}

// waitClosed waits until n response bodies have been closed, or ctx ends.
// One goroutine at a time may wait.
func (c *closeRecorder) waitClosed(ctx context.Context, n int64) {
	for c.closed.Load() < n {
		select {
		case <-c.changed:
		case <-ctx.Done():
			return
		}
	}
}

func (c *closeRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &recordedBody{ReadCloser: resp.Body, rec: c}
	return resp, nil
}

type recordedBody struct {
	io.ReadCloser
	rec  *closeRecorder
	once sync.Once
}

func (b *recordedBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() {
		b.rec.lastClose.Store(int64(now()))
		n := b.rec.closed.Add(1)
		if b.rec.onClose != nil {
			b.rec.onClose(n)
		}
		poke(b.rec.changed)
	})
	return err
}

// readAllTransport is the read-everything-first baseline: it reads the whole
// body with io.ReadAll before sending anything and replays it from a
// bytes.Reader, as go-retryablehttp does. It bounds nothing; it counts what
// it holds so that the load benchmark can show it.
type readAllTransport struct {
	inner      http.RoundTripper
	held, peak atomic.Int64
}

func (t *readAllTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return t.inner.RoundTrip(req)
	}
	data, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("bench: reading the request body: %w", err)
	}
	n := int64(len(data))
	if h := t.held.Add(n); h > t.peak.Load() {
		for p := t.peak.Load(); h > p && !t.peak.CompareAndSwap(p, h); p = t.peak.Load() {
		}
	}
	var release sync.Once
	done := func() { release.Do(func() { t.held.Add(-n) }) }
	out := new(http.Request)
	*out = *req // the RoundTripper contract: never modify the caller's request
	out.Body = io.NopCloser(bytes.NewReader(data))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	out.ContentLength = n
	resp, err := t.inner.RoundTrip(out)
	if err != nil {
		done()
		return nil, err
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: done}
	return resp, nil
}

type releasingBody struct {
	io.ReadCloser
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

// newUnderTest builds the transport of the given kind around inner.
func newUnderTest(cfg stackConfig, inner *http.Transport) (underTest, error) {
	switch cfg.kind {
	case kindPlain:
		return underTest{rt: inner}, nil
	case kindFloor:
		return underTest{rt: &floorTransport{inner: inner}}, nil
	case kindReadAll:
		t := &readAllTransport{inner: inner}
		return underTest{rt: t, held: t.held.Load, peak: t.peak.Load}, nil
	case kindTeebody:
		return newTeebody(cfg, inner)
	case kindAdaptive:
		cfg.adaptive = true
		return newTeebody(cfg, inner)
	}
	return underTest{}, fmt.Errorf("bench: unknown transport kind %q", cfg.kind)
}

// leakCheck records the goroutines alive now; its verify, called once the
// stack is closed, fails tb if any other goroutine is still alive then
// (goleak retries for a while, so goroutines that are ending get the time
// to end), or if the goroutine count did not come back to where it was.
type leakCheck struct {
	ignore   goleak.Option
	baseline int
}

func startLeakCheck() leakCheck {
	return leakCheck{ignore: goleak.IgnoreCurrent(), baseline: runtime.NumGoroutine()}
}

func (l leakCheck) verify(tb testing.TB) {
	tb.Helper()
	if err := goleak.Find(l.ignore); err != nil {
		tb.Errorf("leaked goroutines: %v", err)
		return
	}
	if n := runtime.NumGoroutine(); n > l.baseline {
		tb.Errorf("goroutines: %d after the run, %d before", n, l.baseline)
	}
}
