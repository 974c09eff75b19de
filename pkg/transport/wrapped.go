package transport

import "net/http"

// WrappedRoundTripper returns the inner RoundTripper, after the convention
// of Kubernetes' RoundTripperWrapper (k8s.io/apimachinery/pkg/util/net).
// apimachinery's UpgradeAwareHandler unwraps t through it to dial upgrade
// requests with the inner transport's TLS configuration. A request sent on
// the inner RoundTripper bypasses t: it gets no replay and no Stats.
func (t *Transport) WrappedRoundTripper() http.RoundTripper { return t.inner }
