// Package transport is an http.RoundTripper that makes request bodies
// replayable, in bounded memory, so that a request refused by its upstream's
// HTTP/2 graceful GOAWAY is sent again instead of failing with "cannot retry
// ... define Request.GetBody" (the README says why this happens).
//
// # Use
//
// Behind httputil.ReverseProxy, set both the transport and its error
// handler:
//
//	tr := transport.New(inner, transport.DefaultConfig()) // inner nil: http.DefaultTransport
//	proxy := &httputil.ReverseProxy{
//		Rewrite:      rewrite,
//		Transport:    tr,
//		ErrorHandler: tr.ErrorHandler,
//	}
//
// As an http.Client's transport: &http.Client{Transport: tr}. Under
// client-go: rest.Config.Wrap(transport.Wrap(cfg)), where every transport
// the function wraps shares one budget. ConfigFromEnv reads the
// configuration from the environment.
//
// # What RoundTrip does
//
// A request passes through to the inner RoundTripper untouched when it has
// no body (nil or http.NoBody), when GetBody is already set, when it asks
// for a protocol upgrade (an Upgrade header, "Connection: Upgrade", or
// X-Stream-Protocol-Version as kubectl exec, attach and port-forward send),
// when the Config disables buffering, and, in adaptive mode, when its
// upstream has left no trace of GOAWAY lately and the body announces more
// than Config.AdaptiveFloorBytes.
//
// Any other request is sent as a shallow copy whose Body and GetBody read
// one teebody.Tee around the original body: bytes go to the upstream as they
// arrive and are kept while a replay is still possible, up to
// Config.PerRequestBytes per request and Config.TotalBytes in all. A body
// that outgrows its limit, or meets a spent budget that no larger body can
// yield to it, streams on and loses only its replay; nothing waits for
// budget. The Tee reads the body at most 1 MiB ahead of what the upstream
// took, and charges the budget for what has arrived, not for what the body
// announced. The caller's request is never modified.
//
// Once a response arrives nothing more is kept. The request is over when
// RoundTrip returns an error or the response body is closed, and at once for
// an empty response; docs/design.md ("The end of a request") says what then
// holds. So a proxy must close the response body before its handler returns
// (httputil.ReverseProxy does).
//
// # Configuration
//
// DefaultConfig keeps up to DefaultPerRequestBytes (50 MiB) per request and
// DefaultTotalBytes (500 MiB) in all, and announces a Retry-After of one
// second. ConfigFromEnv starts from it and reads EnvTotalBytes,
// EnvPerRequestBytes, EnvAdaptiveFloorBytes (in bytes or with a unit, see
// ParseSize) and EnvAdaptive (strconv.ParseBool forms). A size <= 0 disables buffering, the
// per-request limit is capped at the total, and a malformed value is an
// error naming the variable and the value.
//
// # When a replay is impossible
//
// GetBody then returns an error matching teebody.ErrNotReplayable (and
// *teebody.NotReplayableError, for the reason), which RoundTrip returns. The
// upstream did not process the request, so Transport.ErrorHandler answers
// 429 Too Many Requests with Retry-After and a Kubernetes Status, which
// client-go and kubectl retry for every verb; every other error gets 502.
// ShouldRetryLater and WriteRetryLater are the two halves, for proxies of
// other shapes.
//
// # Adaptive mode
//
// With Config.Adaptive, a request is buffered only when its upstream
// (scheme and host of the outgoing URL) left a trace of GOAWAY within
// Config.AdaptiveWindow (DefaultAdaptiveWindow, one hour): a request that
// failed with an error for which ShouldRetryLater is true, or a replay
// served. Each trace renews the window. For other upstreams, a body that
// announces at most Config.AdaptiveFloorBytes (64 KiB by default), or no
// length, is kept up to that floor (Stats.BufferedQuiet), so their first
// GOAWAY costs small writes nothing and its replays are the trace; a larger
// one passes through and holds nothing, and if GOAWAY refuses it, gets the
// 429 above. At most 4096 upstreams are remembered, the oldest trace
// forgotten first. Stats.PassedThrough.Quiet, AdaptiveTraces and
// AdaptiveUpstreams show what it did.
//
// # HTTP/1.1 upstreams
//
// net/http's HTTP/1 transport sends a request again through GetBody only if
// it deems it replayable: an idempotent method, or an Idempotency-Key header
// (golang.org/issue/19943). For those, "server closed idle connection"
// becomes a retry; a request partly written to a dead connection still
// fails.
//
// # Guarantees
//
// A Transport is safe for concurrent use. For a request it buffers,
// RoundTrip never returns a response together with an error; one it passes
// through gets the inner RoundTripper's answer as it is. Every byte the upstream receives is the original
// body's byte at that offset; a body that could not be read whole ends in an
// error, never in a silent truncation. Memory held for replays stays within
// the budget, plus at most one chunk per request streaming unbuffered. Stats
// reports counters and gauges; Drain waits until every buffered body was
// released, e.g. after a server's Shutdown.
package transport
