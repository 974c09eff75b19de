package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/teebody/teebody/pkg/teebody"
)

// Transport is an http.RoundTripper that makes request bodies replayable for
// the inner RoundTripper, so that a request refused by a graceful GOAWAY (or
// a lost HTTP/1 connection) is sent again instead of failing. RoundTrip says
// what it does to each request.
//
// A Transport is safe for concurrent use by multiple goroutines. Create it
// with New or Wrap; the zero value is not usable. Stats reports its counters
// and gauges; Drain waits until every body it buffered was released, e.g.
// after a server's Shutdown.
type Transport struct {
	inner   http.RoundTripper // read-only after New
	cfg     Config            // read-only after New
	enabled bool              // read-only after New
	limit   int64             // per-request limit; read-only after New
	budget  *teebody.Budget   // nil when disabled; read-only after New
	traces  *traces           // nil unless adaptive and enabled; read-only after New

	counters counters // atomics

	// mu guards live and idle, the bookkeeping behind Drain.
	mu   sync.Mutex
	live int           // buffered requests whose Tee has not reported Done
	idle chan struct{} // closed while live == 0; replaced when live leaves 0
}

// New returns a Transport that hands requests to inner (http.DefaultTransport
// when nil) with replayable bodies, within the bounds of cfg.
//
// cfg.PerRequestBytes is capped at cfg.TotalBytes; when cfg.Budget is nil,
// New makes a budget of cfg.TotalBytes for this Transport alone.
func New(inner http.RoundTripper, cfg Config) *Transport {
	if inner == nil {
		inner = http.DefaultTransport
	}
	t := &Transport{inner: inner, cfg: cfg, enabled: cfg.enabled(), idle: make(chan struct{})}
	close(t.idle)
	if t.enabled {
		t.limit = cfg.perRequestLimit()
		t.budget = cfg.Budget
		if t.budget == nil {
			t.budget = teebody.NewBudget(cfg.TotalBytes)
		}
		if cfg.Adaptive {
			t.traces = newTraces(cfg.adaptiveWindow(), maxUpstreams)
		}
	}
	return t
}

// Wrap returns a function that wraps a RoundTripper in a Transport, of the
// shape of client-go's rest.Config.Wrap (a transport.WrapperFunc). Every
// Transport it returns shares one budget: cfg.Budget, or one of
// cfg.TotalBytes made here, so that the bound holds however many clients
// the function wraps. Each Transport keeps its own Stats and, in adaptive
// mode, its own memory of which upstreams sent GOAWAY.
func Wrap(cfg Config) func(http.RoundTripper) http.RoundTripper {
	if cfg.Budget == nil && cfg.enabled() {
		cfg.Budget = teebody.NewBudget(cfg.TotalBytes)
	}
	return func(inner http.RoundTripper) http.RoundTripper {
		return New(inner, cfg)
	}
}

// RoundTrip implements http.RoundTripper. It never modifies req: a request
// it buffers is sent as a shallow copy with Body and GetBody of its own, and
// the response carries req as its Request. A request it passes through gets
// the inner RoundTripper's answer as it is.
//
// A request passes through to the inner RoundTripper untouched, counted in
// Stats.PassedThrough by the first reason that applies, in this order: it has
// no body (nil or http.NoBody); GetBody is already set (it can replay by
// itself); it asks for a protocol upgrade (an Upgrade header, "Connection:
// Upgrade", or X-Stream-Protocol-Version as kubectl exec, attach and
// port-forward send: such requests never go over HTTP/2 and their bodies are
// streams); the Config disables buffering; in adaptive mode, its upstream is
// quiet and its body announces more than Config.AdaptiveFloorBytes (see
// Config.Adaptive).
//
// Any other request is buffered: its Body and GetBody read one teebody.Tee
// around the original body. Bytes go to the upstream as they arrive and are
// kept while a replay is still possible, up to Config.PerRequestBytes per
// request and the shared budget in all (Config.TotalBytes, or
// Config.Budget). The Tee reads the body at most 1 MiB ahead of what the
// upstream took, so a slow upstream slows the client down as through a plain
// proxy, and charges the budget for what has arrived, not for what the body
// announced. A body that outgrows its limit, or meets a spent budget that no
// larger body yields to it (see teebody.Budget), streams on and loses only
// its replay; nothing waits for budget. Once a response arrives, nothing more
// is kept.
//
// A buffered request is over when RoundTrip returns an error, or, after a
// response with a body, when the response body is closed; after that
// req.Body is not read again and its buffer is back in the budget
// (teebody.Tee.Close states the whole contract). For a buffered request
// RoundTrip never returns a response together with an error. The caller must
// close the response body; a proxy must close it before its handler returns,
// since a server's request body must not be read after that
// (httputil.ReverseProxy does).
//
// A response does not end the upload: an HTTP/2 upstream may answer before
// it has read the body, and Go's HTTP/2 transport goes on sending it after
// a 1xx or 2xx (golang.org/issue/13444). Once any response has come, nothing
// of the body is kept for a replay any more, but it streams on as through
// the inner transport alone. An empty response (a nil Body, http.NoBody, a
// ContentLength of 0, or one that never has a body: to HEAD, 204, 304) is
// returned as the inner transport gave it, and its request is over as soon
// as the inner transport is done with the request body: it has read it to
// its end or to an error, or closed it (as the http.RoundTripper contract
// requires it to, even after RoundTrip returned), or req's context is done,
// whichever comes first. That is before RoundTrip returns when the body was
// sent whole before the response, as it usually is; otherwise the upload
// goes on, and ends, exactly as it would without this Transport: closing
// the empty response's body ends the request only if the inner transport
// then stops sending (Go's HTTP/2 transport does, for an open stream). So a
// caller that never closes an empty response holds nothing once the upload
// is over. An inner RoundTripper that neither reads the body to its end nor
// closes it keeps the request open until req's context is done; meanwhile
// it holds no more than it did when the response came (within the
// per-request limit and the budget), and Drain waits for it.
//
// When the upstream refuses the request and a replay is impossible, GetBody
// returns an error matching teebody.ErrNotReplayable, which the inner
// transport, and so RoundTrip, returns as it is; ErrorHandler answers it 429
// with Retry-After. Every byte the upstream receives is the original body's
// byte at that offset; a body that could not be read whole ends in an error,
// never in a silent truncation.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := &t.counters
	c.requests.Add(1)
	switch {
	case req.Body == nil || req.Body == http.NoBody:
		c.passed[PassThroughNoBody].Add(1)
		return t.inner.RoundTrip(req)
	case req.GetBody != nil:
		c.passed[PassThroughGetBodySet].Add(1)
		return t.inner.RoundTrip(req)
	case isUpgrade(req.Header):
		c.passed[PassThroughUpgrade].Add(1)
		return t.inner.RoundTrip(req)
	case !t.enabled:
		c.passed[PassThroughDisabled].Add(1)
		return t.inner.RoundTrip(req)
	}
	var up upstream // only adaptive mode needs it
	limit := t.limit
	if t.traces != nil {
		up = upstreamOf(req.URL)
		if !t.traces.hot(up) {
			if !t.keepsQuiet(req) {
				c.passed[PassThroughQuiet].Add(1)
				resp, err := t.inner.RoundTrip(req)
				t.noteFailure(up, err)
				return resp, err
			}
			c.bufferedQuiet.Add(1)
			limit = min(limit, t.cfg.AdaptiveFloorBytes)
		}
	}
	c.buffered.Add(1)

	t.track()
	tee := teebody.New(req.Body, teebody.WithLimit(limit), teebody.WithBudget(t.budget),
		teebody.WithOnDone(t.untrack), teebody.WithSizeHint(req.ContentLength)) // -1, unknown, is no hint
	body, err := tee.NewReader()
	if err != nil { // a fresh Tee hands out its first reader; kept for safety
		t.end(tee)
		return nil, err
	}
	out := *req // shallow: the caller's request stays as it was
	out.Body = body
	out.GetBody = func() (io.ReadCloser, error) { return t.replay(tee, up) }

	resp, err := t.inner.RoundTrip(&out)
	if err != nil {
		if resp != nil && resp.Body != nil {
			resp.Body.Close() // a broken RoundTripper: never both (net/http's contract)
		}
		t.end(tee)
		t.noteFailure(up, err)
		return nil, err
	}
	// No retry can happen any more: no new followers, and what the newest
	// one has read can go (docs/design.md, life cycle: Sealed).
	tee.Seal()
	resp.Request = req
	if isEmpty(req, resp) {
		// Callers often never close an empty response, and closing it
		// proves nothing about the upload, which an HTTP/2 stream may still
		// be sending (golang.org/issue/13444): the request ends when the
		// inner transport is done with the body.
		t.endAfterUpload(tee, req.Context())
		return resp, nil
	}
	resp.Body = newResponseBody(resp.Body, func() { t.end(tee) })
	return resp, nil
}

// keepsQuiet reports whether adaptive mode keeps req's body, to an upstream
// without a trace of GOAWAY, up to the floor: when it announces at most the
// floor, or nothing (a ContentLength of 0 with a body is unknown too).
func (t *Transport) keepsQuiet(req *http.Request) bool {
	floor := t.cfg.AdaptiveFloorBytes
	return floor > 0 && req.ContentLength <= floor
}

// replay serves one GetBody call for a request to up.
func (t *Transport) replay(tee *teebody.Tee, up upstream) (io.ReadCloser, error) {
	body, err := tee.NewReader()
	if err != nil {
		t.countRefusal(err)
		// Returned as is: the HTTP/2 transport returns GetBody's error
		// unwrapped (docs/design.md, fact 1), so errors.Is(err,
		// teebody.ErrNotReplayable) holds on what RoundTrip returns.
		return nil, err
	}
	t.counters.replaysServed.Add(1)
	t.trace(up)
	return body, nil
}

// noteFailure records a trace of GOAWAY for up, in adaptive mode, when err
// means that up refused a request it did not process.
func (t *Transport) noteFailure(up upstream, err error) {
	if t.traces != nil && ShouldRetryLater(err) {
		t.trace(up)
	}
}

// trace records a trace of GOAWAY for up, in adaptive mode.
func (t *Transport) trace(up upstream) {
	if t.traces != nil {
		t.counters.adaptiveTraces.Add(1)
		t.traces.record(up)
	}
}

// end ends a buffered request: it records whether the budget cut its
// buffering short, then closes the Tee, which never blocks. It is called
// exactly once per Tee.
func (t *Transport) end(tee *teebody.Tee) {
	// errors.AsType, not errors.As: As's target escapes, one allocation per request.
	if nre, ok := errors.AsType[teebody.NotReplayableError](tee.ReplayErr()); ok && nre.Reason() == teebody.ReasonNoBudget {
		t.counters.budgetRefusals.Add(1)
	}
	tee.Close() // Drain learns of the Tee's end through WithOnDone(t.untrack)
}

func (t *Transport) track() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live == 0 {
		t.idle = make(chan struct{})
	}
	t.live++
}

func (t *Transport) untrack() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live--
	if t.live == 0 {
		close(t.idle)
	}
}

// Drain waits until every request body t has buffered is released: each
// such request is over (as RoundTrip says: it returned an error, the
// response body was closed, or, for an empty response, the inner transport
// is done with the request body) and its Tee reported Done (source closed, filler exited,
// budget given back). Requests that start while Drain waits are waited for
// too. It returns nil once that holds, or ctx's error when ctx ends first.
//
// Use it after shutting down whatever sends requests, e.g. after
// http.Server.Shutdown, to know that all memory went back. A response body
// with content that is never closed keeps Drain waiting until ctx ends.
func (t *Transport) Drain(ctx context.Context) error {
	for {
		t.mu.Lock()
		idle, live := t.idle, t.live
		t.mu.Unlock()
		if live == 0 {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// CloseIdleConnections closes the idle connections of the inner
// RoundTripper, if it has such a method, so that http.Client's method of the
// same name reaches it through t.
func (t *Transport) CloseIdleConnections() {
	if ci, ok := t.inner.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// isUpgrade reports whether h asks for a protocol upgrade (WebSocket, SPDY
// as in kubectl exec/attach/port-forward). Such requests never go over
// HTTP/2 and their bodies are streams, not something to replay
// (docs/design.md, fact 5).
//
// The keys are indexed as they are, already canonical: exactly what
// h.Get would look up, without canonicalizing a constant on every request.
func isUpgrade(h http.Header) bool {
	if first(h["Upgrade"]) != "" || first(h["X-Stream-Protocol-Version"]) != "" {
		return true
	}
	for _, v := range h["Connection"] {
		for tok := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "upgrade") {
				return true
			}
		}
	}
	return false
}

// first is what http.Header.Get returns for a key whose values are vs.
func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}
