// Package connect tests teebody's transport under connect-go clients and
// servers. It holds tests only.
//
// connect-go sends a unary call's body with a GetBody, which Go's HTTP/2
// transport uses to send a refused stream again, so the transport passes
// those calls through. It sends a client-streaming or bidi call's body
// through an io.Pipe without one, so a stream that a graceful GOAWAY
// refuses fails with "unavailable: http2: Transport: cannot retry err
// [...]" (connectrpc/connect-go#672). Wrapped in teebody's transport, the
// client's http.Client keeps what it has sent of such a body until the
// server answers, and Go sends the refused stream again. The load tests
// restart servers one at a time, over HTTP/2 with TLS and over h2c, and
// compare both transports.
//
// Once the server has answered a call (response headers, and for a bidi
// call perhaps messages), the body is no longer kept: the request is
// sealed. That loses nothing to a GOAWAY. The server's GOAWAY names the
// last stream it accepted, which includes every stream it answered, and Go
// asks for GetBody only before RoundTrip returns. What a sealed bidi call
// can still lose is the end of a rollout's grace: if the server closes its
// connection while the client still sends, the call fails with code
// internal through either transport, and only the caller can decide to
// make it again, since the server had started it.
package connect
