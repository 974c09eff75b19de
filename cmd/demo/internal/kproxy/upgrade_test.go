package kproxy_test

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/websocket"
	"k8s.io/client-go/rest"

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// startPrivateBackend serves the embedded API over TLS and HTTP/2 with a
// certificate from a CA of its own, requiring a client certificate from
// that CA, until the test ends; it returns the client-go config that
// reaches it.
func startPrivateBackend(t *testing.T) *rest.Config {
	t.Helper()
	ca, err := serve.NewCA()
	require.NoError(t, err)
	serving, err := ca.Server()
	require.NoError(t, err)
	certPEM, keyPEM, err := ca.Client("teebody-proxy")
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(fakeapi.New(fakeapi.Options{}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{serving.Cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    ca.Pool(),
	}
	srv.Config.ErrorLog = slog.NewLogLogger(slog.DiscardHandler, slog.LevelError) // the refused handshakes
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca.PEM(), CertData: certPEM, KeyData: keyPEM}}
}

// opaque hides every method of a RoundTripper but RoundTrip, as a
// Transport without WrappedRoundTripper did.
type opaque struct{ http.RoundTripper }

// execEcho opens the exec-style WebSocket of the embedded API through the
// proxy at spec, sends messages of random bytes and checks that each comes
// back intact.
func execEcho(t *testing.T, spec kubeconfig.Spec) error {
	t.Helper()
	cfg, err := websocket.NewConfig(spec.Server+"/api/v1/namespaces/default/pods/echo/exec?command=cat&stdin=true&stdout=true", "http://localhost")
	require.NoError(t, err)
	cfg.Location.Scheme = "wss"
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(spec.CAData))
	cfg.TlsConfig = &tls.Config{RootCAs: pool}
	cfg.Protocol = []string{fakeapi.ExecProtocol}
	ws, err := websocket.DialConfig(cfg)
	if err != nil {
		return err
	}
	defer ws.Close()
	for _, n := range []int{1, 4 << 10, 200 << 10} {
		sent := make([]byte, n)
		_, _ = rand.Read(sent)
		require.NoError(t, websocket.Message.Send(ws, sent))
		var got []byte
		require.NoError(t, websocket.Message.Receive(ws, &got))
		require.True(t, bytes.Equal(sent, got), "%d bytes sent, %d came back, equal %v", n, len(got), bytes.Equal(sent, got))
	}
	return nil
}

// TestUpgradeThroughProxies: an exec-style WebSocket upgrade to a backend
// with a private CA that requires a client certificate crosses
// UpgradeAwareHandler (wrapTransport false and true) and ReverseProxy with
// the teebody transport in place, bytes intact both ways. UpgradeAwareHandler
// dials the upgrade itself, so the request never reaches the transport;
// ReverseProxy hands it to the transport, which passes it through.
func TestUpgradeThroughProxies(t *testing.T) {
	backend := startPrivateBackend(t)
	inner, loc := upstreamTransport(t, backend)
	for _, wrap := range []bool{false, true} {
		t.Run("UpgradeAwareHandler/wrapTransport="+map[bool]string{false: "false", true: "true"}[wrap], func(t *testing.T) {
			tr := transport.New(inner, transport.DefaultConfig())
			spec := serveProxy(t, upgradeAware(loc, tr, wrap, tr.Responder()))
			require.NoError(t, execEcho(t, spec))
			assert.Zero(t, tr.Stats().Requests, "UpgradeAwareHandler dials upgrades itself")
		})
	}
	t.Run("ReverseProxy", func(t *testing.T) {
		tr := transport.New(inner, transport.DefaultConfig())
		rp := &httputil.ReverseProxy{
			Rewrite:      func(pr *httputil.ProxyRequest) { pr.SetURL(loc) },
			Transport:    tr,
			ErrorHandler: tr.ErrorHandler,
		}
		require.NoError(t, execEcho(t, serveProxy(t, rp)))
		st := tr.Stats()
		assert.Equal(t, int64(1), st.Requests)
		assert.Zero(t, st.Buffered)
		// A WebSocket handshake has no body: passed through as such.
		assert.Equal(t, int64(1), st.PassedThrough.NoBody+st.PassedThrough.Upgrade, "passed through: %+v", st.PassedThrough)
	})
}

// TestUpgradeNeedsWrappedRoundTripper: without WrappedRoundTripper,
// UpgradeAwareHandler cannot find the TLS configuration behind the
// transport, dials with none, and the backend's private CA fails the
// upgrade.
func TestUpgradeNeedsWrappedRoundTripper(t *testing.T) {
	backend := startPrivateBackend(t)
	inner, loc := upstreamTransport(t, backend)
	var logged proxytest.SyncBuffer
	cfg := transport.DefaultConfig()
	cfg.ErrorLog = log.New(&logged, "", 0)
	tr := transport.New(inner, cfg)
	err := execEcho(t, serveProxy(t, upgradeAware(loc, opaque{tr}, false, tr.Responder())))
	require.Error(t, err, "the upgrade went through without the CA")
	assert.Equal(t, int64(1), tr.Stats().BadGatewayWritten)
	assert.Contains(t, logged.String(), "certificate signed by unknown authority")
}
