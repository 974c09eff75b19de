package proxy

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/teebody/teebody/pkg/transport"
)

// unwrap lists rt and what it wraps, outermost first, down to the first RoundTripper that wraps nothing.
func unwrap(rt http.RoundTripper) []http.RoundTripper {
	chain := []http.RoundTripper{rt}
	for {
		w, ok := rt.(utilnet.RoundTripperWrapper)
		if !ok {
			return chain
		}
		rt = w.WrappedRoundTripper()
		chain = append(chain, rt)
	}
}

// TestTeleportChainOrder: the teebody transport sits right above the *http.Transport, below client-go's
// wrappers (impersonation among them) and the instrumentation, as docs/teleport.md puts it; without a wrap, the
// client-go wrappers sit on the *http.Transport itself.
func TestTeleportChainOrder(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1", BearerToken: "t", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	var tr *transport.Transport
	rt, base, err := teleportChain(cfg, func(inner http.RoundTripper) http.RoundTripper {
		tr = transport.New(inner, transport.DefaultConfig())
		return tr
	})
	require.NoError(t, err)
	defer base.CloseIdleConnections()
	chain := unwrap(rt)
	require.GreaterOrEqual(t, len(chain), 4, "instrumentation, client-go's wrappers, teebody, *http.Transport")
	assert.IsType(t, instrumented{}, chain[0], "outermost")
	assert.Same(t, base, chain[len(chain)-1], "innermost: the *http.Transport")
	assert.Same(t, tr, chain[len(chain)-2], "right above the *http.Transport: the teebody transport")
	var names []string
	for _, rt := range chain[1 : len(chain)-2] {
		names = append(names, reflect.TypeOf(rt).String())
	}
	assert.Contains(t, names, "*transport.impersonatingRoundTripper", "client-go's wrappers: %v", names)
	assert.Contains(t, names, "*transport.bearerAuthRoundTripper", "client-go's wrappers: %v", names)
	assert.Contains(t, base.TLSClientConfig.NextProtos, "h2", "HTTP/2 offered")

	rt, base, err = teleportChain(cfg, nil)
	require.NoError(t, err)
	defer base.CloseIdleConnections()
	chain = unwrap(rt)
	assert.Same(t, base, chain[len(chain)-1])
	assert.NotEqual(t, "*transport.Transport", reflect.TypeOf(chain[len(chain)-2]).String(), "no teebody transport without a wrap")
}
