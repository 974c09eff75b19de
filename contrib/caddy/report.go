package teebodycaddy

import (
	"context"

	"github.com/caddyserver/caddy/v2"

	"github.com/teebody/teebody/pkg/transport"
)

// The placeholders that RoundTrip sets on the request's replacer from the
// library's transport.Report, for the access log (log_append), the routes
// after reverse_proxy (header with defer, handle_response) and handle_errors.
// They describe all of Caddy's attempts at the request (lb_retries) together.
// They are unset while no attempt has reached the transport.
const (
	// AttemptsPlaceholder holds how many times the body was sent to an
	// upstream, an int: 1, plus 1 per replay after a GOAWAY. It is 0 for a
	// body that passed through, or that no upstream read.
	AttemptsPlaceholder = "http.reverse_proxy.teebody.attempts"

	// RefusedPlaceholder holds why a replay of the body was refused, a
	// string such as "too_large" or "no_budget" (teebody.Reason), or "" if
	// none was.
	RefusedPlaceholder = "http.reverse_proxy.teebody.refused"

	// WithheldPlaceholder holds whether a replay of the body was refused
	// for want of proof that the upstream did not process the request, a
	// bool: the request was written on an HTTP/1 connection that failed.
	WithheldPlaceholder = "http.reverse_proxy.teebody.withheld"

	// BufferedPlaceholder holds whether the latest attempt kept the body for
	// replays, a bool.
	BufferedPlaceholder = "http.reverse_proxy.teebody.buffered"

	// PassedThroughPlaceholder holds why the latest attempt handed the body
	// on untouched, a string such as "no_body" or "get_body_set"
	// (transport.PassThroughReason), or "" if it kept the body.
	PassedThroughPlaceholder = "http.reverse_proxy.teebody.passed_through"

	// PeakBytesPlaceholder holds the most memory held at once for the body's
	// replays, in bytes, an int64.
	PeakBytesPlaceholder = "http.reverse_proxy.teebody.peak_bytes"
)

// replacerOf returns the Caddy replacer in ctx, or nil.
func replacerOf(ctx context.Context) *caddy.Replacer {
	repl, _ := ctx.Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	return repl
}

// publishReport adds r, the Report of one attempt at a request, to the
// placeholders on repl: attempts add up, the peak is the largest, a refusal
// stays until a later one replaces it, a withheld replay stays, and the rest
// are the latest attempt's.
// Called on the handler's goroutine, which makes the attempts one by one.
func publishReport(repl *caddy.Replacer, r *transport.Report) {
	attempts, _ := repl.Get(AttemptsPlaceholder)
	n, _ := attempts.(int)
	repl.Set(AttemptsPlaceholder, n+r.Attempts)

	peak, _ := repl.Get(PeakBytesPlaceholder)
	p, _ := peak.(int64)
	repl.Set(PeakBytesPlaceholder, max(p, r.PeakBytes))

	if r.Refused != 0 {
		repl.Set(RefusedPlaceholder, r.Refused.String())
	} else if _, ok := repl.Get(RefusedPlaceholder); !ok {
		repl.Set(RefusedPlaceholder, "")
	}

	withheld, _ := repl.Get(WithheldPlaceholder)
	w, _ := withheld.(bool)
	repl.Set(WithheldPlaceholder, w || r.Withheld)

	repl.Set(BufferedPlaceholder, r.Buffered)
	passed := ""
	if r.PassThrough != 0 {
		passed = r.PassThrough.String()
	}
	repl.Set(PassedThroughPlaceholder, passed)
}
