package transport

import "net/http"

// WrappedRoundTripper returns the inner RoundTripper that t hands requests
// to (http.DefaultTransport when New was given nil).
//
// It follows the convention of Kubernetes' RoundTripperWrapper
// (k8s.io/apimachinery/pkg/util/net), which client-go's own wrappers follow
// too: code that needs the dialer or the TLS configuration behind a
// RoundTripper unwraps it, method by method, down to an *http.Transport.
// apimachinery's UpgradeAwareHandler does so to dial upgrade requests
// (kubectl exec, port-forward, WebSockets) itself; without this method it
// cannot see past t, and dials with no CA and no client certificate.
//
// A request sent on the returned RoundTripper bypasses t: it gets no replay
// buffer and is not counted in Stats. Upgrades need none (they are never
// buffered), which is what the convention is for.
func (t *Transport) WrappedRoundTripper() http.RoundTripper { return t.inner }
