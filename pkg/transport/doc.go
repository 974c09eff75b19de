// Package transport is an http.RoundTripper that makes request bodies
// replayable, in bounded memory. A request that its upstream refused with
// an HTTP/2 graceful GOAWAY is then sent again, instead of failing with
//
//	http2: Transport: cannot retry err [http2: Transport received Server's
//	graceful shutdown GOAWAY] after Request.Body was written; define
//	Request.GetBody to avoid this error
//
// Go's HTTP/2 client sends a refused request again only if
// http.Request.GetBody can produce its body. A proxy forwards its client's
// body, which has no GetBody.
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
// Elsewhere:
//   - an http.Client: &http.Client{Transport: tr};
//   - client-go: rest.Config.Wrap(tr.Wrap);
//   - apimachinery's UpgradeAwareHandler: tr.Responder() as its responder.
//
// Over HTTP/1.1, net/http sends a request again only after it failed on a
// reused connection. A request with a body also needs GetBody, which the
// Transport sets on every request it buffers. net/http resends such a
// request if nothing of it was written. Otherwise it resends it only if the
// connection failed before the response's first byte, and the request is a
// GET, HEAD, OPTIONS or TRACE, or has an Idempotency-Key or
// X-Idempotency-Key header (golang.org/issue/19943). The upstream may have
// processed such a request before the connection failed, so the Transport's
// GetBody does not serve that second kind of resend. Once the request's
// headers were written on a connection that may speak HTTP/1, GetBody fails
// with an error for which ShouldRetryLater is false, as a transport without
// GetBody does. Every connection may speak HTTP/1 but HTTP/2 over TLS and
// quic-go's HTTP/3, as httptrace's GotConn names them.
package transport
