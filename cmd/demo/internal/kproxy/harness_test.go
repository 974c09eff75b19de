package kproxy_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
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

// lockedBuffer is a log destination that the test reads while servers
// write to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
