//go:build go1.27

package transport_test

import (
	"io"
	"testing"
)

// Fact 6, pins Go 1.27: httputil.ReverseProxy no longer wraps the inbound
// body. Its Transport gets the inbound body itself, which ServeHTTP closes
// as it returns, so nothing guards a Read that comes later: ReverseProxy is
// as exposed as a hand-written proxy, and the transport's own rule (no Read
// of the source once the request is over) is all that protects it. (Go 1.26
// wraps it: facts_reverseproxy_go126_test.go.)
func TestFactReverseProxyHandsOnInboundBody(t *testing.T) {
	in, out := reverseProxyBodies(t)
	if out != io.ReadCloser(in) {
		t.Errorf("the transport got %T, want the inbound body itself", out)
	}
	if !in.closed.Load() {
		t.Error("ServeHTTP returned without closing the inbound body")
	}
}
