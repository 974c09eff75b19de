//go:build !go1.27

package transport_test

import (
	"strings"
	"testing"
)

// Fact 6, pins Go 1.26: httputil.ReverseProxy hands its Transport a wrapper
// of the inbound body: closing it does not close the inbound body, and a
// Read after ServeHTTP returned fails with the text ShouldRetryLater knows.
// (Go 1.27 dropped the wrapper: facts_reverseproxy_go127_test.go.)
func TestFactReverseProxyGuardsInboundBody(t *testing.T) {
	in, out := reverseProxyBodies(t)
	out.Close()
	if in.closed.Load() {
		t.Error("closing the outgoing body closed the inbound one")
	}
	if _, err := out.Read(make([]byte, 1)); err == nil || !strings.Contains(err.Error(), "ReverseProxy does an invalid Read on closed Body") {
		t.Errorf("Read after ServeHTTP returned: %v, want ReverseProxy's invalid Read error", err)
	}
}
