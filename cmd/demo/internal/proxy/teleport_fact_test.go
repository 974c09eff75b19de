package proxy

import (
	"crypto/tls"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/net/http2"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// configureTwice configures HTTP/2 on a fresh *http.Transport as Teleport's agent does: x/net's
// http2.ConfigureTransport, then utilnet.SetTransportDefaults, and returns what the latter panicked with.
func configureTwice(t *testing.T) (panicked any) {
	base := &http.Transport{TLSClientConfig: &tls.Config{NextProtos: []string{http2.NextProtoTLS, "http/1.1"}}}
	defer base.CloseIdleConnections()
	//lint:ignore SA1019 the call under test
	if err := http2.ConfigureTransport(base); err != nil {
		t.Fatal(err)
	}
	defer func() { panicked = recover() }()
	utilnet.SetTransportDefaults(base)
	return nil
}

// TestFactConfigureTwice pins why configureBeforeDefaults depends on the Go release: configuring HTTP/2 twice is
// an error that SetTransportDefaults logs with x/net's own HTTP/2 (Go 1.26), and a panic where x/net wraps
// net/http's (Go 1.27).
func TestFactConfigureTwice(t *testing.T) {
	got := configureTwice(t)
	if configureBeforeDefaults {
		assert.Nil(t, got, "with x/net's own HTTP/2 the second configuration is an error, logged")
	} else {
		assert.Equal(t, "http: HTTP/2 Transport already registered", got, "Go 1.27: the second configuration panics")
	}
}
