// Package transport is an http.RoundTripper that lets a request survive an
// HTTP/2 graceful GOAWAY from its upstream (a Kubernetes API server started
// with --goaway-chance, for example) by making its body replayable, in
// bounded memory.
//
// # The problem
//
// When an HTTP/2 server sends a graceful GOAWAY, the streams it had not yet
// accepted are refused, and Go's HTTP/2 transport sends them again on a new
// connection — but only if it can produce the body again through
// Request.GetBody. A reverse proxy forwards a body that it reads from its own
// client, which has no GetBody, so the request fails with
//
//	http2: Transport: cannot retry err [http2: Transport received Server's
//	graceful shutdown GOAWAY] after Request.Body was written; define
//	Request.GetBody to avoid this error
//
// or, through net/http's transport, "net/http: cannot rewind body after
// connection loss".
//
// # Usage
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
// client-go, rest.Config.Wrap(transport.Wrap(cfg)): every transport the
// function wraps shares one budget. The configuration can come from the
// environment with ConfigFromEnv.
//
// # What RoundTrip does
//
// A request passes through to the inner RoundTripper untouched when it has
// no body (nil or http.NoBody), when the caller set GetBody (it can replay by
// itself), when it asks for a protocol upgrade (an Upgrade header,
// "Connection: Upgrade", or X-Stream-Protocol-Version as kubectl exec,
// attach and port-forward send: such requests never go over HTTP/2 and their
// bodies are streams), when the Config disables buffering, and, in adaptive
// mode, when its upstream has sent no GOAWAY lately (see below).
//
// Any other request is sent as a shallow copy whose Body and GetBody read
// one teebody.Tee around the original body: the bytes are streamed to the
// upstream as they arrive (nothing waits for the whole body) and kept while
// a replay is still possible, up to Config.PerRequestBytes per request and
// Config.TotalBytes (the budget) in all. A body that outgrows its limit, or
// meets a spent budget, streams on unbuffered and loses only its replay;
// nothing ever waits for budget. The caller's request is never modified.
//
// Once the response headers arrive no retry can happen, so nothing more is
// kept, and what was kept goes back as the upstream reads on. The request is
// over when RoundTrip returns an error or when the response body is closed:
// then the original body is closed once (by the goroutine that read it to its
// end, or from a goroutine of its own, so a Close that waits for a pending Read
// cannot block the caller) and never read
// again, and every byte goes back to the budget — also when the inner
// transport abandoned some of the bodies GetBody gave it without closing
// them, as net/http's does. A proxy must therefore close the response body
// before its handler returns (httputil.ReverseProxy does), and a client must
// close it as always.
//
// A response without a body (http.NoBody: HEAD, 204, 304) ends the request
// at once, since callers often never close it.
//
// # Configuration
//
// DefaultConfig keeps up to DefaultPerRequestBytes (50 MiB) per request and
// DefaultTotalBytes (500 MiB) in all, and announces a Retry-After of one
// second. ConfigFromEnv starts from it and reads EnvTotalBytes
// (TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_TOTAL) and EnvPerRequestBytes
// (TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_PER_REQ), in bytes or with a unit
// ("524288000", "500MiB", "50Mi", "1G", "1.5GiB"; see ParseSize). A value
// <= 0 disables buffering, the per-request limit is capped at the total,
// and a malformed value is an error naming the variable and the value,
// never a silent default. The total bounds the memory a proxy spends on
// replays under any load; the per-request limit is the largest body that
// can survive a GOAWAY (a Kubernetes API server refuses request bodies over
// 3 MiB by default, so the default covers every write it would accept).
//
// # When a replay is impossible
//
// If the upstream refuses a request whose body could not be kept, GetBody
// returns an error that matches teebody.ErrNotReplayable with errors.Is (and
// *teebody.NotReplayableError with errors.As, for the reason), and RoundTrip
// returns it. The upstream did not process such a request, so the client
// may send it again: Transport.ErrorHandler answers it with 429 Too Many
// Requests, a Retry-After header and a Kubernetes Status body — what the API
// server itself answers while it cannot take a request, which client-go and
// kubectl retry for every verb. Every other error gets ReverseProxy's 502.
// ShouldRetryLater is the predicate behind it, and WriteRetryLater the
// answer, for proxies of other shapes.
//
// # Adaptive mode
//
// Nothing announces ahead of time whether an upstream sends GOAWAY (an API
// server's --goaway-chance is not visible to its clients), and many never
// do. With Config.Adaptive (or EnvAdaptive,
// TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_ADAPTIVE=true), a request is buffered
// only when its upstream (scheme and host of the outgoing URL) has left a
// trace of GOAWAY within Config.AdaptiveWindow (DefaultAdaptiveWindow, one
// hour): a request to it that failed with an error for which
// ShouldRetryLater is true, or a replay served for one of its buffered
// requests. Each trace renews the window. Every other request passes through
// untouched and holds nothing.
//
// So an upstream that never sends GOAWAY never costs a byte, and one that
// does costs, once per window, the requests that were in flight on the first
// connection it closed: they fail as without this package, ErrorHandler
// answers them 429 with Retry-After, and client-go and kubectl send them
// again, which their users do not see. A client that does not retry 429
// sees those answers. After that, the upstream's requests are buffered as
// without Adaptive. Budget, limits, Stats, Drain and ErrorHandler work
// alike in both modes; Stats.PassedThrough.Quiet, AdaptiveTraces and
// AdaptiveUpstreams say what adaptive mode did. At most 4096 upstreams are
// remembered, the one with the oldest trace forgotten first; forgetting
// one costs a few 429s again.
//
// # HTTP/1.1 upstreams
//
// net/http's HTTP/1 transport uses GetBody too, to send a request again on a
// new connection when the old one was lost before the request got through;
// but it does so only for requests it deems replayable: idempotent methods,
// or a POST, PUT, PATCH or DELETE with an Idempotency-Key header
// (Request.isReplayable, golang.org/issue/19943). For those the Transport
// turns "http: server closed idle connection" into a retry; a request that
// was partly written to a dead connection still fails, as without it.
//
// # Guarantees
//
// A Transport is safe for concurrent use. RoundTrip never returns a response
// together with an error. Every byte the upstream receives is the original
// body's byte at that offset; a body that could not be read whole ends in an
// error, never in a silent truncation. Memory held for replays stays within
// the budget (plus at most one chunk per request in flight while it streams
// unbuffered). Stats reports the counters and gauges, and Drain waits until
// every buffered body was released, e.g. after a server's Shutdown.
package transport
