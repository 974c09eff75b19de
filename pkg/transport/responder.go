package transport

import "net/http"

// ErrorResponder adapts a function of ErrorHandler's shape to the
// ErrorResponder interface of apimachinery's proxy package
// (k8s.io/apimachinery/pkg/util/proxy), whose UpgradeAwareHandler takes
// one, so that the library needs no Kubernetes module:
//
//	h := proxy.NewUpgradeAwareHandler(location, tr, wrapTransport, false, tr.Responder())
type ErrorResponder func(w http.ResponseWriter, r *http.Request, err error)

// Error calls f(w, r, err).
func (f ErrorResponder) Error(w http.ResponseWriter, r *http.Request, err error) { f(w, r, err) }

// Responder returns t.ErrorHandler as an ErrorResponder: 429 with
// Retry-After and a Kubernetes Status when ShouldRetryLater(err), else 502
// with a Kubernetes Status, counted in Stats as ErrorHandler counts them. It
// is safe for concurrent use.
func (t *Transport) Responder() ErrorResponder { return t.ErrorHandler }
