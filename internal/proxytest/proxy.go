package proxytest

import (
	"io"
	"net/http"
	"net/url"
)

// HandProxy is a hand-written forwarding handler of the kind many Kubernetes
// proxies use instead of httputil.ReverseProxy. It has none of
// ReverseProxy's guards around the inbound body: it hands r.Body itself to
// the transport, so a transport under it must stop reading that body before
// ServeHTTP returns. It closes the response body before returning.
//
// Set the fields before the first request; ServeHTTP is then safe for
// concurrent use.
type HandProxy struct {
	// Target is the scheme and host every request is sent to; the path and
	// query are the inbound request's.
	Target *url.URL
	// Transport sends the outbound requests.
	Transport http.RoundTripper
	// ErrorHandler answers the transport's errors; nil answers 502.
	ErrorHandler func(http.ResponseWriter, *http.Request, error)
}

func (p *HandProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host = p.Target.Scheme, p.Target.Host
	out.Host = ""
	if r.ContentLength == 0 {
		out.Body = nil
	}
	resp, err := p.Transport.RoundTrip(out)
	if err != nil {
		if p.ErrorHandler == nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		p.ErrorHandler(w, r, err)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
