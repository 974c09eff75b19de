package transport

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/teebody/teebody/pkg/teebody"
)

// Transport is an http.RoundTripper that makes request bodies replayable for
// an inner RoundTripper. Create it with New. The zero Transport is ready for
// use: it is New(nil, DefaultConfig()). A Transport is safe for concurrent
// use by multiple goroutines, and must not be copied after first use.
type Transport struct {
	inner  http.RoundTripper // read-only after New, Wrap or initZero
	*state                   // shared with the Transports that Wrap made; read-only after New, Wrap or initZero
	zero   sync.Once         // runs initZero's fill-in
}

// state is what the Transports of one New share: the Config, the budget,
// the adaptive traces, the counters behind Stats and the bookkeeping behind
// Drain.
type state struct {
	cfg     Config          // read-only after New
	enabled bool            // read-only after New
	limit   int64           // per-request limit; read-only after New
	budget  *teebody.Budget // nil when disabled; read-only after New
	traces  *traces         // nil unless adaptive and enabled; read-only after New

	counters counters // atomics

	// mu guards live and idle, the bookkeeping behind Drain.
	mu   sync.Mutex
	live int           // buffered requests whose Tee has not let go
	idle chan struct{} // closed while live == 0; replaced when live leaves 0

	// untrackFunc is untrack as a func value, made once by newState: what
	// the Tee of a request without a BodyTrace calls when it is done, in
	// place of exchange.done, a method value allocated per request.
	untrackFunc func()
}

// New returns a Transport that hands requests to inner (nil means
// http.DefaultTransport) within the bounds of cfg. Without cfg.Budget, it
// makes a budget of the total of its own.
func New(inner http.RoundTripper, cfg Config) *Transport {
	return &Transport{inner: innerOrDefault(inner), state: newState(cfg)}
}

// initZero makes a zero Transport one of New(nil, DefaultConfig()), once.
// Every exported method, or the function it returns, calls it before it
// reads t's fields: the fill-in happens before any of those calls returns.
func (t *Transport) initZero() {
	t.zero.Do(func() {
		if t.state == nil {
			t.inner, t.state = http.DefaultTransport, newState(Config{})
		}
	})
}

// newState returns the state of a Transport of cfg.
func newState(cfg Config) *state {
	cfg = cfg.applied()
	s := &state{cfg: cfg, enabled: cfg.enabled(), idle: make(chan struct{})}
	close(s.idle)
	s.untrackFunc = s.untrack
	if s.enabled {
		s.limit = cfg.PerRequestBytes
		s.budget = cfg.Budget
		if s.budget == nil {
			s.budget = teebody.NewBudget(cfg.TotalBytes)
		}
		if cfg.Adaptive {
			s.traces = newTraces(cfg.AdaptiveWindow, maxUpstreams)
		}
	}
	return s
}

// Wrap returns a Transport that hands requests to inner (nil means
// http.DefaultTransport) and shares everything else with t: the Config,
// the budget, the adaptive traces, Stats and Drain. Its signature is that
// of client-go's transport.WrapperFunc:
//
//	restConfig.Wrap(tr.Wrap)
func (t *Transport) Wrap(inner http.RoundTripper) http.RoundTripper {
	t.initZero()
	return &Transport{inner: innerOrDefault(inner), state: t.state}
}

func innerOrDefault(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		return http.DefaultTransport
	}
	return rt
}

// RoundTrip implements http.RoundTripper. It never modifies req.
//
// A request passes through untouched for any PassThroughReason, which
// Stats.PassedThrough counts.
//
// Any other request goes out as a copy whose Body and GetBody read one
// teebody.Tee. The body streams upstream and, until a response comes, is
// kept for a replay, within Config.PerRequestBytes and the budget. A body
// that outgrows them loses only its replay: if the upstream refuses it,
// RoundTrip returns an error matching teebody.ErrNotReplayable. The
// upstream gets the original bytes in order, or an error. A request that
// HTTP/3 says the upstream did not process is sent again, up to six
// attempts in all.
//
// A buffered request is over when RoundTrip returns an error or the response
// body is closed. With an empty response, it is over once the inner
// transport is done with the request body or req's context is done,
// whichever comes first. Then no new Read of req.Body starts, but for one
// the Tee was about to start, whose bytes are dropped (teebody.Tee.Close).
// Its memory is back in the budget. A proxy must close the response body
// before its handler returns, as httputil.ReverseProxy does.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.initZero()
	c := &t.counters
	c.requests.Add(1)
	switch {
	case isUpgrade(req.Header):
		return t.passThrough(req, PassThroughUpgrade)
	case req.Body == nil || req.Body == http.NoBody:
		return t.passThrough(req, PassThroughNoBody)
	case req.GetBody != nil:
		return t.passThrough(req, PassThroughGetBodySet)
	case !t.enabled:
		return t.passThrough(req, PassThroughDisabled)
	}
	var up upstream // only adaptive mode needs it
	limit := t.limit
	if t.traces != nil {
		up = upstreamOf(req.URL)
		if !t.traces.hot(up) {
			if !t.keepsQuiet(req) {
				resp, err := t.passThrough(req, PassThroughQuiet)
				t.noteFailure(up, err)
				return resp, err
			}
			c.bufferedQuiet.Add(1)
			limit = min(limit, t.cfg.AdaptiveFloorBytes)
		}
	}
	c.buffered.Add(1)
	hs := hooksOf(req.Context())
	rt := newRequestTrace(hs) // nil without a BodyTrace

	t.track()
	x := &exchange{t: t, up: up, rt: rt, hooks: hs}
	done := t.untrackFunc // without a BodyTrace, all that exchange.done does
	if rt != nil {
		done = x.done
	}
	tee := teebody.New(req.Body, teebody.WithLimit(limit), teebody.WithBudget(t.budget),
		teebody.WithOnDone(done), teebody.WithSizeHint(req.ContentLength)) // -1, unknown, is no hint
	x.tee = tee
	body, err := tee.NewReader()
	if err != nil {
		// Tee.NewReader's first call fails only on a closed Tee. A broken
		// promise of teebody's is a bug to surface, not an error to answer.
		panic("transport: a new Tee refused its first reader: " + err.Error())
	}
	out := &x.out
	*out = *req // shallow: the caller's request stays as it was
	out.Body = rt.body(body, true)
	out.GetBody = x.getBody
	x.traceWire()
	if req.Trailer != nil {
		withTrailer(out, newTrailer(req.Trailer))
	}
	return t.sendBuffered(x, req)
}

// sendBuffered sends x.out, a buffered request of the caller's req, and
// hands back the response, whose body's Close then ends the request. Until
// that hand-over, every way out closes the response's body, if one came,
// and ends the request: an error, a nil response with a nil error, and a
// panic of the inner RoundTripper or of a BodyTrace hook on this goroutine,
// which goes on with its value. net/http's server recovers a handler's
// panic, and the Tee must not hold its bytes, its budget and Drain for the
// life of the process.
func (t *Transport) sendBuffered(x *exchange, req *http.Request) (*http.Response, error) {
	var resp *http.Response
	handedOver := false
	defer func() {
		if handedOver {
			return
		}
		if resp != nil && resp.Body != nil {
			resp.Body.Close() // with an error, a broken RoundTripper: never both (net/http's contract)
		}
		t.end(x.tee)
	}()
	resp, err := t.send(&x.out)
	if err == nil && resp == nil {
		err = fmt.Errorf("transport: %T returned a nil *http.Response with a nil error", t.inner)
	}
	if err != nil {
		handedOver = plant == plantSkipEnd // a defect planted in a test build (plant.go)
		reportBuffered(x, false)
		t.noteFailure(x.up, err)
		return nil, err
	}
	// No retry can happen any more: no new followers, and what the newest
	// one has read can go (docs/design.md, life cycle: Sealed).
	x.tee.Seal()
	x.rt.answered()
	reportBuffered(x, true)
	resp.Request = req
	handedOver = true
	if isEmpty(req, resp) {
		// Callers often never close an empty response, and closing it
		// proves nothing about the upload, which an HTTP/2 stream may still
		// be sending (golang.org/issue/13444): the request ends when the
		// inner transport is done with the body.
		t.endAfterUpload(x.tee, req.Context())
		return resp, nil
	}
	resp.Body = x.responseBody(resp.Body)
	return resp, nil
}

// passThrough hands req to the inner RoundTripper untouched, for reason.
func (t *Transport) passThrough(req *http.Request, reason PassThroughReason) (*http.Response, error) {
	t.counters.passed[reason].Add(1)
	hs := hooksOf(req.Context())
	reportPassThrough(hs, reason)
	tracePassThrough(hs, reason)
	return t.inner.RoundTrip(req)
}

// keepsQuiet reports whether adaptive mode keeps req's body, to an upstream
// without a trace of GOAWAY, up to the floor: when it announces at most the
// floor, or nothing (a ContentLength of 0 with a body is unknown too).
func (t *Transport) keepsQuiet(req *http.Request) bool {
	floor := t.cfg.AdaptiveFloorBytes
	return floor > 0 && req.ContentLength <= floor
}

// replay serves one GetBody call for a request to up, traced by rt.
func (t *Transport) replay(tee *teebody.Tee, up upstream, rt *requestTrace) (io.ReadCloser, error) {
	body, err := tee.NewReader()
	if err != nil {
		t.countRefusal(err)
		rt.refused(err)
		// Returned as is: the HTTP/2 transport returns GetBody's error
		// unwrapped (docs/design.md, fact 1), so errors.Is(err,
		// teebody.ErrNotReplayable) holds on what RoundTrip returns.
		return nil, err
	}
	t.counters.replaysServed.Add(1)
	t.trace(up)
	return rt.body(body, false), nil
}

// noteFailure records a trace of GOAWAY for up, in adaptive mode, when err
// means that up refused a request it did not process, or that a resend of
// a request whose connection went away read its closed body. A trace needs
// no proof: it only turns buffering on.
func (t *Transport) noteFailure(up upstream, err error) {
	if t.traces != nil && (ShouldRetryLater(err) || readClosedBody(err)) {
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
	// ReplayErr returns a NotReplayableError unwrapped, so a type assertion
	// finds it without errors.AsType's walk of a chain.
	if nre, ok := tee.ReplayErr().(teebody.NotReplayableError); ok && nre.Reason() == teebody.ReasonNoBudget {
		t.counters.budgetRefusals.Add(1)
	}
	tee.Close() // Drain learns of the Tee's end through WithOnDone(exchange.done)
}

func (s *state) track() {
	s.mu.Lock()
	if s.live == 0 {
		s.idle = make(chan struct{})
	}
	s.live++
	s.mu.Unlock()
}

func (s *state) untrack() {
	s.mu.Lock()
	s.live--
	if s.live == 0 {
		close(s.idle)
	}
	s.mu.Unlock()
}

// Drain waits until every request t has buffered has let go of what it
// held, including requests that start while it waits. A request lets go
// once it is over (see RoundTrip) and its body's Close has returned; its
// memory is then back in the budget. Drain returns nil then, or ctx's error
// if ctx ends first. Call it after http.Server.Shutdown, for example.
func (t *Transport) Drain(ctx context.Context) error {
	t.initZero()
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
// RoundTripper, if it has such a method.
func (t *Transport) CloseIdleConnections() {
	t.initZero()
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
