package transport

import "net/http"

// ErrorResponder adapts a function to the ErrorResponder interface of
// apimachinery's proxy package, which UpgradeAwareHandler takes:
//
//	h := proxy.NewUpgradeAwareHandler(location, tr, wrapTransport, false, tr.Responder())
type ErrorResponder func(w http.ResponseWriter, r *http.Request, err error)

// Error calls f(w, r, err).
func (f ErrorResponder) Error(w http.ResponseWriter, r *http.Request, err error) { f(w, r, err) }

// Responder returns an ErrorResponder that answers as ErrorHandler does,
// but with a Kubernetes Status body for any request but gRPC's. It is safe
// for concurrent use.
func (t *Transport) Responder() ErrorResponder {
	return func(w http.ResponseWriter, r *http.Request, err error) { t.answer(w, r, err, true) }
}
