package otel

import (
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

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
// transport.Report of its own in a copy of the request's context. Before it
// returns, it sets on the span:
//   - http.request.resend_count: the replays of the body, if any;
//   - a teebody.replay event per replay, with teebody.attempt;
//   - a teebody.refused event, with teebody.reason, if a replay was refused;
//   - teebody.buffered and either teebody.replay_buffer.peak_size or
//     teebody.pass_through.reason.
//
// The events carry the time RoundTrip returned, not the time of the send.
// A request that no transport.Transport saw leaves the span as it was.
// Otherwise RoundTrip hands req to next unchanged.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	span := trace.SpanFromContext(req.Context())
	if !span.IsRecording() {
		return t.next.RoundTrip(req)
	}
	var r transport.Report
	resp, err := t.next.RoundTrip(req.WithContext(transport.WithReport(req.Context(), &r)))
	record(span, &r)
	return resp, err
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
		for n := 2; n <= r.Attempts; n++ {
			span.AddEvent(ReplayEvent, trace.WithAttributes(AttemptKey.Int(n)))
		}
	}
	if r.Refused != 0 {
		span.AddEvent(RefusedEvent, trace.WithAttributes(ReasonKey.String(r.Refused.String())))
	}
}

// CloseIdleConnections closes the idle connections of next, if it has a
// CloseIdleConnections method.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
