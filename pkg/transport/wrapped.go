package transport

import "net/http"

// WrappedRoundTripper returns the inner RoundTripper, as Kubernetes'
// RoundTripperWrapper interface asks. apimachinery's UpgradeAwareHandler
// needs it to dial upgrade requests with the inner transport's TLS
// configuration. Requests sent on the inner RoundTripper bypass t.
func (t *Transport) WrappedRoundTripper() http.RoundTripper { return t.inner }
