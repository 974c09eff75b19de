package transport_test

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teebody/teebody/pkg/transport"
)

// roundTripperWrapper is Kubernetes' RoundTripperWrapper convention
// (k8s.io/apimachinery/pkg/util/net), spelled out here: the library module
// may not import it.
type roundTripperWrapper interface {
	http.RoundTripper
	WrappedRoundTripper() http.RoundTripper
}

// tlsConfigBehind unwraps rt as apimachinery's utilnet.TLSClientConfig does
// before UpgradeAwareHandler dials an upgrade itself: through wrappers down
// to an *http.Transport. It returns nil, as apimachinery does after logging
// "unknown transport type", when a RoundTripper on the way is neither.
func tlsConfigBehind(rt http.RoundTripper) *tls.Config {
	for {
		switch v := rt.(type) {
		case *http.Transport:
			return v.TLSClientConfig
		case roundTripperWrapper:
			rt = v.WrappedRoundTripper()
		default:
			return nil
		}
	}
}

// opaque hides every method of a RoundTripper but RoundTrip.
type opaque struct{ http.RoundTripper }

func TestWrappedRoundTripper(t *testing.T) {
	inner := &http.Transport{}
	t.Cleanup(inner.CloseIdleConnections)
	assert.Same(t, inner, transport.New(inner, transport.DefaultConfig()).WrappedRoundTripper())
	assert.Equal(t, http.DefaultTransport, transport.New(nil, transport.DefaultConfig()).WrappedRoundTripper())
	var _ roundTripperWrapper = transport.New(nil, transport.DefaultConfig())
}

// An upgrade dialed by hand with the TLS configuration found behind the
// Transport, as UpgradeAwareHandler dials it, reaches a server with a private
// CA, and its bytes come back intact; behind a RoundTripper without
// WrappedRoundTripper nothing is found. (The demo module runs the same
// through UpgradeAwareHandler itself, with a client certificate.)
func TestWrappedRoundTripperUpgradeDial(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(echoUpgrade))
	t.Cleanup(srv.Close)
	inner := srv.Client().Transport.(*http.Transport) // trusts the server's own CA
	tr := transport.New(inner, transport.DefaultConfig())

	cfg := tlsConfigBehind(tr)
	require.Same(t, inner.TLSClientConfig, cfg, "the TLS configuration behind the Transport")
	conn, err := tls.Dial("tcp", srv.Listener.Addr().String(), cfg.Clone())
	require.NoError(t, err)
	defer conn.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/echo", nil)
	require.NoError(t, err)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "teebody-echo")
	require.NoError(t, req.Write(conn))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	const msg = "bytes both ways through the upgraded connection"
	_, err = io.WriteString(conn, msg)
	require.NoError(t, err)
	got := make([]byte, len(msg))
	_, err = io.ReadFull(br, got)
	require.NoError(t, err)
	assert.Equal(t, msg, string(got))
	assert.Zero(t, tr.Stats().Requests, "the dial went around the Transport, as UpgradeAwareHandler's does")

	// Without the method there is nothing to find: no CA, no client certificate.
	require.Nil(t, tlsConfigBehind(opaque{tr}))
}

// echoUpgrade switches the connection to a protocol that echoes every byte.
func echoUpgrade(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") != "teebody-echo" {
		http.Error(w, "upgrade required", http.StatusUpgradeRequired)
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: teebody-echo\r\n\r\n")
	if buf.Flush() != nil {
		return
	}
	_, _ = io.Copy(conn, buf)
}
