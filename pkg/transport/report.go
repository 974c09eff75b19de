package transport

import (
	"context"

	"github.com/teebody/teebody/pkg/teebody"
)

// A Report tells what RoundTrip did with one request's body. To get one,
// make the request with a context from WithReport. RoundTrip fills the
// Report in before it returns, with what happened until then. Read it only
// after RoundTrip has returned. A BodyTrace tells of the same events as
// they happen.
type Report struct {
	// Buffered reports whether the body was kept for replays.
	Buffered bool
	// PassThrough is why the body was handed on untouched, or 0 if it was
	// buffered.
	PassThrough PassThroughReason
	// Attempts is how many times the body was sent: 1, plus 1 per replay.
	// A send counts once the inner RoundTripper reads the body, or gets a
	// response. Attempts is 0 if the body passed through, or if the inner
	// RoundTripper failed before it read the body.
	Attempts int
	// Refused is why a replay was refused, or 0 if none was.
	Refused teebody.Reason
	// Withheld reports whether a replay was refused for want of proof
	// that the upstream did not process the request.
	Withheld bool
	// PeakBytes is the most memory held at once for the body's replays.
	PeakBytes int64
}

// WithReport returns a copy of ctx that makes RoundTrip fill in r for a
// request with that context. A Report serves one request. RoundTrip fills
// in every Report of the context, so that an access log and a tracer can
// each have their own. A nil r panics.
func WithReport(ctx context.Context, r *Report) context.Context {
	if r == nil {
		panic("transport: WithReport with a nil *Report")
	}
	return withHook(ctx, hooks{report: r})
}

// fill sets every Report of h to r.
func fill(h *hooks, r Report) {
	for ; h != nil; h = h.outer {
		if h.report != nil {
			*h.report = r
		}
	}
}

// reportPassThrough records in the Reports of h, if any, that the request
// passed through for reason.
func reportPassThrough(h *hooks, reason PassThroughReason) {
	fill(h, Report{PassThrough: reason})
}

// reportBuffered records in the Reports of x's request, if any, what its
// Tee and GetBody did. answered says that a response came: the newest
// follower's attempt got it, so it was sent, though the inner RoundTripper
// may not have read the body yet (HTTP/2 writes it in a goroutine of its
// own, and an upstream may answer first).
func reportBuffered(x *exchange, answered bool) {
	if !x.hooks.hasReport() {
		return // Tee.Usage takes its lock: not for nothing
	}
	u := x.tee.Usage()
	attempts := u.ReadFrom
	if answered && !u.NewestRead {
		attempts++
	}
	fill(x.hooks, Report{Buffered: true, Attempts: attempts, Refused: u.Refused,
		Withheld: x.withheld.Load(), PeakBytes: u.PeakBytes})
}
