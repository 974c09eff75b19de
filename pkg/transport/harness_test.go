package transport_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

// The headers by which a test client tells the upstream what it sends.
const (
	hdrSum   = "X-Body-Sha256" // hex SHA-256 of the whole body
	hdrLen   = "X-Body-Length" // its length in bytes
	hdrWrite = "X-Write-Id"    // identifies one logical write across retries
)

// upstream is a test server that checks each body against the hash and
// length in its headers, and ends its connection after the responses its
// proxytest.Options pick.
type upstream struct {
	srv *proxytest.Server

	ok    atomic.Int64 // bodies that arrived intact
	wrong atomic.Int64 // bodies that arrived with wrong bytes

	mu      sync.Mutex
	applied map[string]int // guarded by mu: hdrWrite -> times applied
}

func (u *upstream) handle(w http.ResponseWriter, r *http.Request) {
	h := sha256.New()
	n, err := io.Copy(h, r.Body)
	if err != nil {
		// The client (the proxy) went away mid-body: nothing applied.
		return
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != r.Header.Get(hdrSum) || strconv.FormatInt(n, 10) != r.Header.Get(hdrLen) {
		u.wrong.Add(1)
		http.Error(w, fmt.Sprintf("wrong bytes: got %d bytes, sha256 %s", n, got), http.StatusBadRequest)
		return
	}
	u.ok.Add(1)
	if id := r.Header.Get(hdrWrite); id != "" {
		u.mu.Lock()
		u.applied[id]++
		u.mu.Unlock()
	}
	w.WriteHeader(http.StatusOK)
}

// newUpstream starts an upstream: TLS with HTTP/2 when h2, else plain
// HTTP/1.1, ending the connection after every n-th response (0: never). It
// is closed at the end of the test.
func newUpstream(t testing.TB, h2 bool, every int64) *upstream {
	return newUpstreamWith(t, proxytest.Options{HTTP1: !h2, Every: every})
}

// refusingUpstream is an HTTP/2 upstream that ends one response in
// goawayEvery, and whose first connection, and every second one after it,
// refuses its streams with a GOAWAY (proxytest's RefuseEvery): the first
// requests sent to it need a replay, every time, and so does the first one
// on every second connection after.
func refusingUpstream(t testing.TB) *upstream {
	return newUpstreamWith(t, proxytest.Options{Every: goawayEvery, RefuseEvery: 2})
}

func newUpstreamWith(t testing.TB, opts proxytest.Options) *upstream {
	u := &upstream{applied: map[string]int{}}
	u.srv = serve(t, http.HandlerFunc(u.handle), opts)
	return u
}

// serve starts a proxytest.Server closed at the end of the test, whose error
// log the test prints if it fails.
func serve(t testing.TB, h http.Handler, opts proxytest.Options) *proxytest.Server {
	if opts.ErrorLog == nil {
		opts.ErrorLog = proxytest.FailureLog(t, "server")
	}
	s := proxytest.NewServer(h, opts)
	t.Cleanup(s.Close)
	return s
}

// appliedCounts returns how many times each write was applied.
func (u *upstream) appliedCounts() map[string]int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return maps.Clone(u.applied)
}

// transportTo returns net/http's transport to s (with its bundled HTTP/2
// when s serves TLS, the one proxies use); its idle connections are closed
// at the end of the test.
func transportTo(t testing.TB, s *proxytest.Server) *http.Transport {
	tr := s.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// logCounter is a log destination that counts the lines matching any of
// its patterns, to see the errors ReverseProxy reports.
type logCounter struct {
	mu    sync.Mutex
	lines []string // guarded by mu
}

func (l *logCounter) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.lines = append(l.lines, string(p))
	l.mu.Unlock()
	return len(p), nil
}

func (l *logCounter) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.lines {
		if strings.Contains(s, substr) {
			n++
		}
	}
	return n
}

// newProxy returns a reverse proxy to u over rt. errorHandler may be nil.
func newProxy(u *upstream, rt http.RoundTripper, errorHandler func(http.ResponseWriter, *http.Request, error), logw io.Writer) *httputil.ReverseProxy {
	target, err := url.Parse(u.srv.URL)
	if err != nil {
		panic(err)
	}
	if logw == nil {
		logw = io.Discard
	}
	return &httputil.ReverseProxy{
		Rewrite:      func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:    rt,
		ErrorHandler: errorHandler,
		ErrorLog:     log.New(logw, "", 0),
	}
}

// testBody is one request body of a load run.
type testBody struct {
	data  []byte
	sum   string
	known bool // send with a Content-Length; else with an unknown length
}

// randomBodies returns n bodies of sizes 0 to max, log-uniform so that
// small and large bodies both occur often without the run moving gigabytes
// (mean about max/ln(max)), with the sizes 0, 1 and max always included,
// half of them of known length.
func randomBodies(seed uint64, n int, max int) []testBody {
	return makeBodies(seed, n, 2*max, func(i int, rng *rand.Rand) int {
		switch i {
		case 0, 1:
			return 0
		case 2, 3:
			return 1
		case 4, 5:
			return max
		}
		return int(math.Exp(rng.Float64()*math.Log(float64(max+1)))) - 1
	})
}

// uniformBodies returns n bodies of sizes uniform in [lo, hi], half of them
// of known length.
func uniformBodies(seed uint64, n, lo, hi int) []testBody {
	return makeBodies(seed, n, 2*hi, func(_ int, rng *rand.Rand) int { return lo + rng.IntN(hi-lo+1) })
}

// makeBodies returns n bodies of the sizes size picks. The bytes are windows
// at random offsets of one random pool of poolSize bytes, so no two bodies
// of a size are likely the same.
func makeBodies(seed uint64, n, poolSize int, size func(int, *rand.Rand) int) []testBody {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pool := make([]byte, poolSize)
	chacha := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16)})
	chacha.Read(pool)
	bodies := make([]testBody, n)
	for i := range bodies {
		size := size(i, rng)
		off := rng.IntN(len(pool) - size + 1)
		data := pool[off : off+size : off+size]
		sum := sha256.Sum256(data)
		bodies[i] = testBody{data: data, sum: hex.EncodeToString(sum[:]), known: i%2 == 0}
	}
	return bodies
}

// hiddenReader hides bytes.Reader's type, so that http.NewRequest neither
// sets GetBody nor learns the length: a body like a proxy's inbound one.
type hiddenReader struct{ r io.Reader }

func (h hiddenReader) Read(p []byte) (int, error) { return h.r.Read(p) }

// newPost returns a POST of b to target without GetBody, with the headers
// the upstream checks.
func newPost(ctx context.Context, target string, b testBody, writeID string) *http.Request {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, hiddenReader{bytes.NewReader(b.data)})
	if err != nil {
		panic(err)
	}
	if b.known {
		req.ContentLength = int64(len(b.data))
		if len(b.data) == 0 {
			req.Body = http.NoBody
		}
	}
	req.Header.Set(hdrSum, b.sum)
	req.Header.Set(hdrLen, strconv.Itoa(len(b.data)))
	if writeID != "" {
		req.Header.Set(hdrWrite, writeID)
	}
	return req
}

// loadResult sums up a load run from the client's side.
type loadResult struct {
	requests, ok, failed int
	errs                 map[string]int // failures by error text or status
}

func (r loadResult) String() string {
	return fmt.Sprintf("%d requests, %d ok, %d failed %v", r.requests, r.ok, r.failed, r.errs)
}

// add counts o's requests in r.
func (r *loadResult) add(o loadResult) {
	if r.errs == nil {
		r.errs = map[string]int{}
	}
	r.requests += o.requests
	r.ok += o.ok
	r.failed += o.failed
	for k, v := range o.errs {
		r.errs[k] += v
	}
}

// runLoad sends every body with rt to target from workers goroutines and
// counts what came back: 200 is ok, anything else a failure.
func runLoad(ctx context.Context, rt http.RoundTripper, target string, bodies []testBody, workers int) loadResult {
	return runRequests(rt, len(bodies), workers, func(i int) *http.Request {
		return newPost(ctx, target, bodies[i], "")
	})
}

// runRequests sends the n requests that newReq builds, for 0 <= i < n, with
// rt from workers goroutines, and counts what came back as runLoad does.
func runRequests(rt http.RoundTripper, n, workers int, newReq func(i int) *http.Request) loadResult {
	outcomes := make([]string, n)
	proxytest.Each(n, workers, func(i int) { outcomes[i] = do(rt, newReq(i)) })
	res := loadResult{requests: n, errs: map[string]int{}}
	for _, outcome := range outcomes {
		if outcome == "" {
			res.ok++
		} else {
			res.failed++
			res.errs[outcome]++
		}
	}
	return res
}

// do sends req and returns "" on 200, else a short description of the
// failure. It reads and closes every response body.
func do(rt http.RoundTripper, req *http.Request) string {
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return errClass(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return "response body: " + errClass(err)
	}
	if resp.StatusCode != http.StatusOK {
		return resp.Status
	}
	return ""
}

// The kinds of error that errClass names.
const (
	classCannotRetry  = "http2: cannot retry err [GOAWAY...] after Request.Body was written"
	classCannotRewind = "net/http: cannot rewind body after connection loss"
	classClosedBody   = "a read of the body an earlier attempt closed"
)

// errClass shortens an error to its kind, dropping addresses and ports.
func errClass(err error) string {
	s := err.Error()
	switch {
	case strings.Contains(s, "define Request.GetBody"):
		return classCannotRetry
	case strings.Contains(s, "cannot rewind body"):
		return classCannotRewind
	case strings.Contains(s, "on closed Body"), s == "body closed by handler":
		return classClosedBody
	case strings.Contains(s, "connection reset by peer"):
		return "connection reset by peer"
	case strings.Contains(s, "broken pipe"):
		return "broken pipe"
	}
	return s
}

// guardedBody wraps a server-side request body and counts the Reads that
// start after the handler returned (docs/design.md, fact 7). A Tee allows one
// per request: the Read its filler may have been about to start when the
// request ended ("At most one read after the end" in docs/design.md), which
// a busy machine sometimes lets start after the handler returned. A second
// one is a bug.
type guardedBody struct {
	io.ReadCloser
	returned *atomic.Bool
	late     *atomic.Int64 // this request's late Reads
	f        *front
}

func (g guardedBody) Read(p []byte) (int, error) {
	if g.returned.Load() {
		g.f.late.Add(1)
		if g.late.Add(1) > 1 {
			g.f.lateAgain.Add(1)
		}
	}
	return g.ReadCloser.Read(p)
}

// front is the server a test client talks to: a proxy handler behind a
// guard that counts reads of the inbound body after the handler returned.
type front struct {
	srv       *proxytest.Server
	late      atomic.Int64   // reads of an inbound body after its handler returned
	lateAgain atomic.Int64   // such reads beyond a request's first
	active    sync.WaitGroup // handlers running
}

// newFront starts h behind the guard, over TLS with HTTP/2 when h2, else
// plain HTTP/1.1.
func newFront(t testing.TB, h2 bool, h http.Handler) *front {
	f := &front{}
	f.srv = serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.active.Add(1)
		defer f.active.Done()
		returned := new(atomic.Bool)
		defer returned.Store(true)
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = guardedBody{ReadCloser: r.Body, returned: returned, late: new(atomic.Int64), f: f}
		}
		h.ServeHTTP(w, r)
	}), proxytest.Options{HTTP1: !h2})
	return f
}

// checkLate fails t if an inbound body was read after its handler returned
// more than the once that a Tee allows.
func (f *front) checkLate(t testing.TB) {
	t.Helper()
	if n := f.lateAgain.Load(); n != 0 {
		t.Errorf("%d reads of an inbound body after its handler returned, beyond the one a request may have (%d in all)", n, f.late.Load())
	}
}

// client returns a transport to f that closes its idle connections at the
// end of the test.
func (f *front) client(t testing.TB) *http.Transport { return transportTo(t, f.srv) }

// newHandProxy returns a hand-written forwarding proxy to u over rt.
func newHandProxy(u *upstream, rt http.RoundTripper, errorHandler func(http.ResponseWriter, *http.Request, error)) *proxytest.HandProxy {
	target, err := url.Parse(u.srv.URL)
	if err != nil {
		panic(err)
	}
	return &proxytest.HandProxy{Target: target, Transport: rt, ErrorHandler: errorHandler}
}
