// Package transport is an http.RoundTripper that makes request bodies
// replayable, in bounded memory, so that a request refused by its upstream's
// HTTP/2 graceful GOAWAY is sent again instead of failing with
//
//	http2: Transport: cannot retry err [http2: Transport received Server's
//	graceful shutdown GOAWAY] after Request.Body was written; define
//	Request.GetBody to avoid this error
//
// Go's HTTP/2 client sends a refused request again on a new connection only if
// it can produce the body again through http.Request.GetBody. A proxy
// forwards a body it reads from its own client, which has no GetBody, so
// without this transport the request fails. Kubernetes API servers started
// with --goaway-chance, nginx after keepalive_requests, load balancers and
// Go servers shutting down all send such GOAWAYs.
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
// the function wraps shares one budget. Behind apimachinery's
// UpgradeAwareHandler: tr.Responder() as its responder. ConfigFromEnv reads
// the configuration from the environment.
//
// # Where each contract is stated
//
//   - Transport.RoundTrip: which requests are buffered and which pass
//     through untouched, what is kept and for how long, and when a request
//     is over. What then holds for its body (never read again, memory and
//     budget back at once) is teebody.Tee.Close's contract, which RoundTrip
//     fulfils.
//   - Transport.ErrorHandler and Transport.Responder: the 429 with
//     Retry-After for a request whose body could not be replayed (which
//     client-go and kubectl retry for every verb), 502 for any other error;
//     ShouldRetryLater and WriteRetryLater are their two halves, for proxies
//     of other shapes.
//   - Config: each bound and its default; Config.Adaptive: adaptive mode,
//     which buffers in full only for upstreams that sent GOAWAY lately, and
//     what it costs. ConfigFromEnv: the environment variables.
//   - teebody.Budget: how one budget is shared by many bodies, never waited
//     for, and which bodies give theirs back to others.
//   - Stats: what each counter and gauge counts; Transport.Drain: waiting
//     until every buffered body was released.
//
// # HTTP/1.1 upstreams
//
// net/http's HTTP/1 transport sends a request again through GetBody only if
// it deems it replayable: an idempotent method, or an Idempotency-Key header
// (golang.org/issue/19943). For those, "server closed idle connection"
// becomes a retry; a request partly written to a dead connection still
// fails.
//
// # Environment variables
//
// The variables ConfigFromEnv reads are named
// TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_*. EnvTotalBytes and
// EnvPerRequestBytes are the names of the change to Teleport's Kubernetes
// proxy that this package generalises (gravitational/teleport pull request
// 60695, which buffered request bodies for the same GOAWAY), kept so that a
// deployment configured for that change needs no new names; the others
// follow their prefix.
package transport
