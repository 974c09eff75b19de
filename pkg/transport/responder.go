package transport

import "net/http"

// ErrorResponderFunc adapts a function to the ErrorResponder interface of
// apimachinery's proxy package, which UpgradeAwareHandler takes:
//
//	h := proxy.NewUpgradeAwareHandler(location, tr, wrapTransport, false, tr.Responder())
type ErrorResponderFunc func(w http.ResponseWriter, r *http.Request, err error)

// Error calls f(w, r, err).
func (f ErrorResponderFunc) Error(w http.ResponseWriter, r *http.Request, err error) { f(w, r, err) }

// Responder returns an ErrorResponderFunc that answers as ErrorHandler
// does, but with a Kubernetes Status body, which client-go and kubectl
// decode, for any request but gRPC's. Its Error method suits
// httputil.ReverseProxy.ErrorHandler in front of the Kubernetes API. It is
// safe for concurrent use.
func (t *Transport) Responder() ErrorResponderFunc {
	return func(w http.ResponseWriter, r *http.Request, err error) { t.answer(w, r, err, true) }
}
