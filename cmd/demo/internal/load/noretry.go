package load

import "net/http"

// noRetry is the -no-retry wrapper: it hands the inner transport a copy of
// each request without GetBody, so that Go's transport cannot replay a body
// after a GOAWAY, as a reverse proxy cannot. client-go sets GetBody on every
// request it makes (its bodies are byte readers), which hides the failure a
// proxy would meet. It implements client-go's RoundTripperWrapper, so that
// idle connections can be closed through it.
type noRetry struct {
	rt http.RoundTripper
}

func (n noRetry) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.GetBody == nil {
		return n.rt.RoundTrip(req)
	}
	out := req.WithContext(req.Context()) // a shallow copy: RoundTrip must not modify req
	out.GetBody = nil
	return n.rt.RoundTrip(out)
}

func (n noRetry) WrappedRoundTripper() http.RoundTripper { return n.rt }
