package transport

import (
	"context"

	"github.com/teebody/teebody/pkg/teebody"
)

// A Report tells what RoundTrip did with one request's body. To get one,
// make the request with a context from WithReport. RoundTrip fills the
// Report in before it returns.
type Report struct {
	// Buffered reports whether the body was kept for replays.
	Buffered bool
	// PassThrough is why the body was handed on untouched, or 0 if it was
	// buffered.
	PassThrough PassThroughReason
	// Attempts is how many times the body was sent: 1, plus 1 per replay.
	// It is 0 if the body passed through, or if the inner RoundTripper
	// failed before it read the body.
	Attempts int
	// Refused is why a replay was refused, or 0 if none was.
	Refused teebody.Reason
	// PeakBytes is the most memory held at once for the body's replays.
	PeakBytes int64
}

// reportKey is the context key of a request's *Report.
type reportKey struct{}

// WithReport returns a copy of ctx that makes RoundTrip fill in r for a
// request with that context. A Report serves one request.
func WithReport(ctx context.Context, r *Report) context.Context {
	return context.WithValue(ctx, reportKey{}, r)
}

// reportOf returns the Report that ctx asks RoundTrip to fill in, or nil.
func reportOf(ctx context.Context) *Report {
	r, _ := ctx.Value(reportKey{}).(*Report)
	return r
}

// reportPassThrough records in req's Report, if any, that req passed through
// for reason.
func reportPassThrough(ctx context.Context, reason PassThroughReason) {
	if r := reportOf(ctx); r != nil {
		*r = Report{PassThrough: reason}
	}
}

// reportBuffered records in ctx's Report, if any, what tee did.
func reportBuffered(ctx context.Context, tee *teebody.Tee) {
	if r := reportOf(ctx); r != nil {
		u := tee.Usage()
		*r = Report{Buffered: true, Attempts: u.ReadFrom, Refused: u.Refused, PeakBytes: u.PeakBytes}
	}
}
