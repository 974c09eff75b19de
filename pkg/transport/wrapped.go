package transport

import "net/http"

// WrappedRoundTripper returns the inner RoundTripper, as Kubernetes'
// RoundTripperWrapper interface asks. UpgradeAwareHandler dials upgrades
// with the TLS configuration it finds there. Requests sent on the inner
// RoundTripper bypass t.
func (t *Transport) WrappedRoundTripper() http.RoundTripper {
	t.initZero()
	return t.inner
}
