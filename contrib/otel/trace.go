package otel

import (
	"net/http"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// The attribute keys and event names of the spans.
const (
	// ResendCountKey is OpenTelemetry's HTTP attribute for the times a
	// request was sent again: the replays of its body.
	ResendCountKey = attribute.Key("http.request.resend_count")
	// BufferedKey tells whether the body was kept for replays.
	BufferedKey = attribute.Key("teebody.buffered")
	// PassThroughReasonKey is why the body was handed on untouched:
	// transport.PassThroughReason's String.
	PassThroughReasonKey = attribute.Key("teebody.pass_through.reason")
	// PeakSizeKey is the most bytes held at once for the body's replays.
	PeakSizeKey = attribute.Key("teebody.replay_buffer.peak_size")
	// AttemptKey is the number of the send that a replay event records:
	// 2 for the first replay.
	AttemptKey = attribute.Key("teebody.attempt")

	// ReplayEvent records one replay of the body.
	ReplayEvent = "teebody.replay"
	// RefusedEvent records that a replay was refused, with the reason
	// (ReasonKey, teebody.Reason's String).
	RefusedEvent = "teebody.refused"
	// WithheldEvent records that a replay was refused for want of proof
	// that the upstream did not process the request, which was written on
	// an HTTP/1 connection that failed.
	WithheldEvent = "teebody.withheld"
)

// Transport is an http.RoundTripper that records on the span in a request's
// context what a teebody transport.Transport did with the request's body.
// Create it with NewTransport. It is safe for concurrent use by multiple
// goroutines if its inner RoundTripper is.
type Transport struct {
	next http.RoundTripper // read-only after NewTransport
}

// NewTransport returns a Transport that hands requests to next: a
// transport.Transport, or a RoundTripper that calls one with the request's
// context. A nil next panics.
//
// The span must be in the request's context when RoundTrip is called, so
// the Transport goes inside the RoundTripper that starts the client span:
//
//	otelhttp.NewTransport(teebodyotel.NewTransport(transport.New(inner, cfg)))
//
// Then the client span covers every send of the request, and the Transport
// records the replays on it. Outside otelhttp's Transport, it would record
// them on the parent of the client span, if any.
func NewTransport(next http.RoundTripper) *Transport {
	if next == nil {
		panic("teebody/contrib/otel: NewTransport with a nil RoundTripper")
	}
	return &Transport{next: next}
}

// RoundTrip implements http.RoundTripper. It never modifies req.
//
// If the span in req's context is recording, RoundTrip puts a
// transport.Report and a transport.BodyTrace of its own in a copy of the
// request's context. As things happen, it adds to the span:
//   - a teebody.replay event per replay, with teebody.attempt, when the
//     replay starts to be sent;
//   - a teebody.refused event, with teebody.reason, when a replay is
//     first refused;
//   - a teebody.withheld event when a replay is withheld for want of
//     proof.
//
// Before it returns, it sets on the span http.request.resend_count, the
// replays of the body, if any; and teebody.buffered with either
// teebody.replay_buffer.peak_size or teebody.pass_through.reason. A replay
// that starts after RoundTrip has returned adds no event. A request that
// no transport.Transport saw leaves the span as it was. Otherwise
// RoundTrip hands req to next unchanged.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	span := trace.SpanFromContext(req.Context())
	if !span.IsRecording() {
		return t.next.RoundTrip(req)
	}
	var r transport.Report
	events := &spanEvents{span: span}
	ctx := transport.WithBodyTrace(transport.WithReport(req.Context(), &r), &transport.BodyTrace{
		SendStart:      events.sendStart,
		ReplayRefused:  events.refused,
		ReplayWithheld: events.withheld,
	})
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	events.stop()
	record(span, &r)
	return resp, err
}

// spanEvents adds a request's events to its span as they happen, until
// RoundTrip returns.
type spanEvents struct {
	span trace.Span

	mu      sync.Mutex
	stopped bool // RoundTrip has returned; guarded by mu
	refusal bool // the refused event is on the span; guarded by mu
}

// sendStart adds a replay event for attempt, from the second on.
func (e *spanEvents) sendStart(attempt int) {
	if attempt < 2 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.stopped {
		e.span.AddEvent(ReplayEvent, trace.WithAttributes(AttemptKey.Int(attempt)))
	}
}

// refused adds the refused event, for the first refusal.
func (e *spanEvents) refused(reason teebody.Reason) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.stopped && !e.refusal {
		e.refusal = true
		e.span.AddEvent(RefusedEvent, trace.WithAttributes(ReasonKey.String(reason.String())))
	}
}

// withheld adds the withheld event.
func (e *spanEvents) withheld() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.stopped {
		e.span.AddEvent(WithheldEvent)
	}
}

// stop ends the events, when RoundTrip returns.
func (e *spanEvents) stop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopped = true
}

// record sets on span what r reports.
func record(span trace.Span, r *transport.Report) {
	switch {
	case r.Buffered:
		span.SetAttributes(BufferedKey.Bool(true), PeakSizeKey.Int64(r.PeakBytes))
	case r.PassThrough != 0:
		span.SetAttributes(BufferedKey.Bool(false), PassThroughReasonKey.String(r.PassThrough.String()))
		return
	default:
		return // no transport.Transport filled r in
	}
	if r.Attempts > 1 {
		span.SetAttributes(ResendCountKey.Int(r.Attempts - 1))
	}
}

// CloseIdleConnections closes the idle connections of next, if it has a
// CloseIdleConnections method.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
