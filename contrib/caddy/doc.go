// Package teebodycaddy is a Caddy transport module,
// http.reverse_proxy.transport.teebody, that makes the request bodies of
// Caddy's reverse_proxy replayable. A POST that an HTTP/2 upstream refuses
// with a graceful GOAWAY is then sent again instead of becoming a 502. nginx
// after keepalive_requests, Envoy on drain, a Go server's Shutdown and a
// Kubernetes API server's --goaway-chance all refuse requests so.
//
// Caddy's own transport sets no Request.GetBody, so Go's HTTP/2 transport
// cannot resend a refused request whose body it began to write.
// reverse_proxy retries only GETs and dial errors by default. Its
// request_buffers reads the whole body before proxying anything. This
// module embeds Caddy's HTTP transport (reverseproxy.HTTPTransport), so
// every option of `transport http` works as there. It wraps it in the
// library's transport.Transport, which keeps what has been read of a body,
// in bounded memory, while a replay is still possible.
//
// # Use
//
// Build Caddy with the module: xcaddy build --with
// github.com/teebody/teebody/contrib/caddy, or a main package that imports
// it beside Caddy's cmd and standard modules. Then replace `transport http`
// with `transport teebody` in a reverse_proxy:
//
//	reverse_proxy https://backend:8443 {
//		transport teebody {
//			total        500MiB # the budget of this transport: all its bodies together
//			per_request  50MiB  # one body; a longer one streams on without a replay
//			adaptive            # buffer only for upstreams that sent GOAWAY lately ...
//			adaptive_floor 64KiB # ... and small bodies always
//			retry_after  1s     # the Retry-After of a 429
//			on_refused   respond # or: status, error (see Transport.OnRefused)
//			name         api    # the metrics' transport label
//			tls_trust_pool file /etc/ssl/backend-ca.pem # any `transport http` subdirective
//		}
//	}
//
// Every setting is optional. The fields of Transport say what each does,
// and what holds when it is absent. Sizes take units (transport.ParseSize). A
// malformed value fails `caddy adapt` (Caddyfile) or the config load (JSON)
// with an error that names the setting.
//
// # What clients see
//
// A request that its upstream refused, and whose body could not be sent
// again, was not processed by the upstream (transport.ShouldRetryLater). It
// is answered 429 Too Many Requests with Retry-After, never 502, and the
// client may send it again. Its body outgrew per_request, the budget was
// spent, or it passed through in adaptive mode. Every other error of the
// upstream is Caddy's to answer, as with `transport http`.
//
// # Placeholders
//
// RoundTrip tells what it did with each request's body in placeholders on
// Caddy's replacer. The access log (log_append), the routes that run after
// reverse_proxy (header with defer, handle_response) and handle_errors can
// use them:
//
//	{http.reverse_proxy.teebody.attempts}        times the body was sent: 1, plus 1 per replay; 0 if it passed through
//	{http.reverse_proxy.teebody.refused}         why a replay was refused (too_large, no_budget, ...), or empty
//	{http.reverse_proxy.teebody.withheld}        true if a replay was refused because the upstream may have processed the request
//	{http.reverse_proxy.teebody.buffered}        true if the body was kept for replays
//	{http.reverse_proxy.teebody.passed_through}  why it was handed on untouched (no_body, get_body_set, ...), or empty
//	{http.reverse_proxy.teebody.peak_bytes}      the most bytes held at once for its replays
//
// For example, an access log with the attempts and the refusal of each
// request:
//
//	log_append teebody_attempts {http.reverse_proxy.teebody.attempts}
//	log_append teebody_refused {http.reverse_proxy.teebody.refused}
//
// AttemptsPlaceholder and the constants beside it say what each holds.
//
// # Metrics
//
// The transport's transport.Stats are exported on Caddy's metrics endpoints
// (the admin API's /metrics, the metrics handler) as the teebody_* metrics
// of github.com/teebody/teebody/contrib/prometheus. Their label
// transport="NAME" (Transport.Name) tells the transports of several
// reverse_proxy blocks apart.
package teebodycaddy
