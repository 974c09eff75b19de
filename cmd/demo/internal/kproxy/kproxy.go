// Package kproxy puts Kubernetes' own proxy handler, apimachinery's
// UpgradeAwareHandler, in front of an upstream API server, wired as the
// kube-aggregator wires it: one handler per request, the upstream's
// location with the request's path, and an ErrorResponder for transport
// errors. Given the teebody transport, it survives the upstream's GOAWAYs;
// with a Responder it answers 429 when a body could not be replayed.
package kproxy

import (
	"net/http"
	"net/url"

	"k8s.io/apimachinery/pkg/util/proxy"
)

// Options configure New.
type Options struct {
	// Location is the upstream's base URL (scheme and host).
	Location *url.URL
	// Transport sends the requests to the upstream: a plain client-go
	// transport, or transport.New around one. Upgrade requests never reach
	// it: UpgradeAwareHandler dials them itself, with the dialer and TLS
	// configuration it finds behind Transport (through WrappedRoundTripper).
	Transport http.RoundTripper
	// WrapTransport wraps Transport in apimachinery's proxy transport
	// (X-Forwarded-* headers, URL rewriting in HTML), as the aggregator
	// does; its errors then reach Responder flattened into a string.
	WrapTransport bool
	// Responder answers a request whose transport failed; required.
	Responder proxy.ErrorResponder
}

// New returns a handler that forwards every request to opts.Location with
// the request's path and query, through a new UpgradeAwareHandler: its
// ServeHTTP writes to its own Transport field when WrapTransport is set, so
// one handler must not serve two requests at once. The returned handler is
// safe for concurrent use.
func New(opts Options) http.Handler {
	base := *opts.Location
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		loc := base
		loc.Path = r.URL.Path
		loc.RawPath = r.URL.RawPath
		loc.RawQuery = r.URL.RawQuery
		h := proxy.NewUpgradeAwareHandler(&loc, opts.Transport, opts.WrapTransport, false, opts.Responder)
		h.UseLocationHost = true
		h.ServeHTTP(w, r)
	})
}
