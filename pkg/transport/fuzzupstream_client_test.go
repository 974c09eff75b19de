package transport_test

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// fuzzTimeout is how long a client waits for a request, on the synctest
// clock: what ends a stall.
const fuzzTimeout = 10 * time.Second

// fuzzBody returns the body of request i of n bytes: a pattern of its own,
// so that bytes of another request or at the wrong offset show.
func fuzzBody(i, n int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(j*7 + j>>8 + i*31)
	}
	return b
}

// runResult is what one run of a script saw.
type runResult struct {
	plain   bool
	got     []clientResult
	log     upstreamLog
	drained error // Drain's error, with our Transport
	held    int64 // Stats().BytesHeld after Drain
}

// clientResult is what the client got for one request.
type clientResult struct {
	status     int    // 0 if RoundTrip failed
	err        error  // RoundTrip's error, or the one the proxy's ErrorHandler answered
	retryLater bool   // ShouldRetryLater(err), on the http.Client path
	answer     string // the X-Answer header
	body       []byte
	bodyErr    error
	viaProxy   bool // through a ReverseProxy, which reports no body error
}

// runScript plays s in a synctest bubble, through our Transport, or, if
// plain, through net/http's transport alone, and returns what it saw.
// Every goroutine of the run has ended when it returns.
func runScript(t *testing.T, s *script, plain bool) *runResult {
	res := &runResult{plain: plain, got: make([]clientResult, len(s.reqs))}
	synctest.Test(t, func(t *testing.T) {
		var inner *http.Transport
		var closeUpstream func() upstreamLog
		if s.h1 {
			inner, closeUpstream = startH1(s)
		} else {
			inner, closeUpstream = startH2(s)
		}
		var rt http.RoundTripper = inner
		var tr *transport.Transport
		errorHandler := func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) }
		if !plain {
			cfg := fuzzConfigs[s.cfg].cfg
			cfg.ErrorLog = proxytest.QuietLog()
			tr = transport.New(inner, cfg)
			rt, errorHandler = tr, tr.ErrorHandler
		}
		var wg sync.WaitGroup
		for i := range s.reqs {
			wg.Go(func() {
				if s.proxy {
					res.got[i] = sendThroughProxy(rt, errorHandler, i, s.reqs[i])
				} else {
					res.got[i] = sendWithClient(rt, i, s.reqs[i])
				}
			})
		}
		wg.Wait()
		if tr != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			res.drained = tr.Drain(ctx)
			cancel()
			res.held = tr.Stats().BytesHeld
		}
		// A dial that lost the race for a request may still be under way
		// and leave its connection idle in the pool.
		synctest.Wait()
		inner.CloseIdleConnections()
		res.log = closeUpstream()
	})
	return res
}

// startH2 starts s's HTTP/2 upstream and returns a transport to it, h2c
// with prior knowledge, and a function that closes the upstream and
// returns its log.
func startH2(s *script) (*http.Transport, func() upstreamLog) {
	u := newH2Upstream(s)
	tr := &http.Transport{DialContext: u.dial, DisableCompression: true, Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return tr, func() upstreamLog {
		u.close()
		u.mu.Lock()
		defer u.mu.Unlock()
		return u.log
	}
}

// startH1 starts s's HTTP/1.1 upstream and returns a transport to it and
// a function that closes the upstream and returns its log.
func startH1(s *script) (*http.Transport, func() upstreamLog) {
	u := newH1Upstream(s)
	l := newMemListener()
	srv := &http.Server{Handler: u, ErrorLog: proxytest.QuietLog()}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(l)
	}()
	return &http.Transport{DialContext: l.dial, DisableCompression: true}, func() upstreamLog {
		close(u.stop)
		srv.Close()
		<-served
		// The handlers of closed connections return; a connection the
		// server closes after an unread body lingers half a second
		// (Go 1.27's closeWriteAndWait), on the bubble's clock.
		time.Sleep(time.Second)
		synctest.Wait()
		u.mu.Lock()
		defer u.mu.Unlock()
		return u.log
	}
}

// newFuzzRequest returns request i of a script as a client or a server
// would hand it on: a body without GetBody, its length known or not.
func newFuzzRequest(ctx context.Context, i int, r fuzzRequest) *http.Request {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://upstream.test/write",
		hiddenReader{bytes.NewReader(fuzzBody(i, r.size))})
	if err != nil {
		panic(err)
	}
	req.ContentLength = -1
	if r.known {
		req.ContentLength = int64(r.size)
		if r.size == 0 {
			req.Body = http.NoBody
		}
	}
	req.Header.Set(hdrFuzzReq, strconv.Itoa(i))
	if r.idem {
		req.Header.Set("Idempotency-Key", strconv.Itoa(i))
	}
	return req
}

// sendWithClient sends request i with an http.Client over rt.
func sendWithClient(rt http.RoundTripper, i int, r fuzzRequest) clientResult {
	ctx, cancel := context.WithTimeout(context.Background(), fuzzTimeout)
	defer cancel()
	resp, err := (&http.Client{Transport: rt}).Do(newFuzzRequest(ctx, i, r))
	if err != nil {
		return clientResult{err: err, retryLater: transport.ShouldRetryLater(err)}
	}
	defer resp.Body.Close()
	body, berr := io.ReadAll(resp.Body)
	return clientResult{status: resp.StatusCode, answer: resp.Header.Get("X-Answer"), body: body, bodyErr: berr}
}

// sendThroughProxy hands request i to an httputil.ReverseProxy over rt, as
// its server would, and records the answer.
func sendThroughProxy(rt http.RoundTripper, errorHandler func(http.ResponseWriter, *http.Request, error), i int, r fuzzRequest) clientResult {
	ctx, cancel := context.WithTimeout(context.Background(), fuzzTimeout)
	defer cancel()
	target, _ := url.Parse("http://upstream.test")
	var proxyErr error // what the ErrorHandler was given
	p := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: rt,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			proxyErr = err
			errorHandler(w, r, err)
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	in := newFuzzRequest(ctx, i, r)
	in.RequestURI = in.URL.RequestURI()
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, in)
	resp := rec.Result()
	body, _ := io.ReadAll(resp.Body)
	return clientResult{status: resp.StatusCode, err: proxyErr, answer: resp.Header.Get("X-Answer"), body: body, viaProxy: true}
}
