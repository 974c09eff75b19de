package kproxy_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/teebody/teebody/cmd/demo/internal/certs"
	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
)

// serveProxy serves h over TLS and HTTP/2 on loopback until the test ends,
// and returns the kubeconfig that reaches it (no credentials: the proxy
// forwards with the upstream's).
func serveProxy(t *testing.T, h http.Handler) kubeconfig.Spec {
	t.Helper()
	pair, err := certs.SelfSigned()
	require.NoError(t, err)
	srv, err := serve.Start("127.0.0.1:0", h, pair.Cert, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Shutdown(context.Background())) })
	return kubeconfig.Spec{Name: "kproxy", Server: srv.URL(), CAData: pair.CAData}
}

// upstreamTransport returns client-go's transport for cfg (its TLS settings
// and credentials) and the upstream's URL; its idle connections close when
// the test ends.
func upstreamTransport(t *testing.T, cfg *rest.Config) (http.RoundTripper, *url.URL) {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.Proxy = http.ProxyFromEnvironment // never client-go's process-wide cached transport
	rt, err := rest.TransportFor(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { utilnet.CloseIdleConnectionsFor(rt) })
	u, err := url.Parse(cfg.Host)
	require.NoError(t, err)
	return rt, u
}
