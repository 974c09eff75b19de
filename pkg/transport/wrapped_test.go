package transport_test

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

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
	if got := transport.New(inner, transport.DefaultConfig()).WrappedRoundTripper(); got != inner {
		t.Errorf("WrappedRoundTripper() = %p, want the inner Transport %p", got, inner)
	}
	if got := transport.New(nil, transport.DefaultConfig()).WrappedRoundTripper(); got != http.DefaultTransport {
		t.Errorf("WrappedRoundTripper() of New(nil) = %p, want http.DefaultTransport %p", got, http.DefaultTransport)
	}
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
	if cfg != inner.TLSClientConfig {
		t.Fatalf("TLS configuration behind the Transport = %p, want the inner Transport's %p", cfg, inner.TLSClientConfig)
	}
	conn, err := tls.Dial("tcp", srv.Listener.Addr().String(), cfg.Clone())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/echo", nil)
	if err != nil {
		t.Fatalf("NewRequest: %v", err)
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "teebody-echo")
	if err := req.Write(conn); err != nil {
		t.Fatalf("write the request: %v", err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatalf("ReadResponse: %v", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d, want %d", resp.StatusCode, http.StatusSwitchingProtocols)
	}
	const msg = "bytes both ways through the upgraded connection"
	if _, err := io.WriteString(conn, msg); err != nil {
		t.Fatalf("write to the upgraded connection: %v", err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(br, got); err != nil {
		t.Fatalf("read from the upgraded connection: %v", err)
	}
	if string(got) != msg {
		t.Errorf("echoed %q, want %q", got, msg)
	}
	if n := tr.Stats().Requests; n != 0 {
		t.Errorf("Stats().Requests = %d, want 0: the dial goes around the Transport, as UpgradeAwareHandler's does", n)
	}

	// Without the method there is nothing to find: no CA, no client certificate.
	if cfg := tlsConfigBehind(opaque{tr}); cfg != nil {
		t.Fatalf("TLS configuration behind an opaque RoundTripper = %p, want nil", cfg)
	}
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
