// Package kproxy_test puts Kubernetes' own proxy handler, apimachinery's
// UpgradeAwareHandler, in front of the embedded API server with the teebody
// transport, wired as the kube-aggregator wires it: one handler per
// request, the upstream's location with the request's path, and an
// ErrorResponder for transport errors (the transport's Responder). It holds
// tests and an example only.
package kproxy_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/client-go/rest"

	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// upgradeAware forwards every request to loc with the request's path and
// query through a new UpgradeAwareHandler: with wrapTransport set, its
// ServeHTTP writes to its own Transport field, so one handler must not
// serve two requests at once. Upgrade requests never reach rt: the handler
// dials them itself, with the dialer and TLS configuration it finds behind
// rt (through WrappedRoundTripper).
func upgradeAware(loc *url.URL, rt http.RoundTripper, wrapTransport bool, rs proxy.ErrorResponder) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l := *loc
		l.Path, l.RawPath, l.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
		h := proxy.NewUpgradeAwareHandler(&l, rt, wrapTransport, false, rs)
		h.UseLocationHost = true
		h.ServeHTTP(w, r)
	})
}

// serveProxy serves h over TLS and HTTP/2 on loopback until the test ends,
// and returns the kubeconfig that reaches it (no credentials: the proxy
// forwards with the upstream's).
func serveProxy(t *testing.T, h http.Handler) kubeconfig.Spec {
	t.Helper()
	srv, err := serve.Start(serve.Options{Name: "kproxy", Handler: h})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Shutdown(context.Background())) })
	return srv.Spec()
}

// upstreamTransport returns client-go's transport for cfg (its TLS settings
// and credentials) and the upstream's URL; its idle connections close when
// the test ends.
func upstreamTransport(t *testing.T, cfg *rest.Config) (http.RoundTripper, *url.URL) {
	t.Helper()
	rt, err := rest.TransportFor(kubeconfig.Isolated(cfg))
	require.NoError(t, err)
	t.Cleanup(func() { utilnet.CloseIdleConnectionsFor(rt) })
	u, err := url.Parse(cfg.Host)
	require.NoError(t, err)
	return rt, u
}
