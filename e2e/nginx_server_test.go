//go:build unix

package e2e

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The headers by which the load client tells the backend what it sends.
const (
	hdrBodySum   = "X-Body-Sha256" // hex SHA-256 of the whole body
	hdrRequestID = "X-Request-Id"  // one logical request, the same across the client's retries
)

// nginxConf is the configuration the suite runs nginx with: its defaults (keepalive_requests 1000 among them) but
// for what runs it on loopback from a temporary folder. master_process off keeps nginx to the one process the
// suite starts, so that stopping that PID, or the kernel's SIGKILL when the test binary dies (Pdeathsig), stops all
// of it: a worker does not exit when its master is killed. That process runs as whoever started the suite, so no
// user directive is needed. The backend side keeps its connections (keepalive), or 60,000 requests would leave as
// many sockets in TIME_WAIT. Its arguments: the folder, nginx's address, the backend's, and more directives for the
// server block (startNginxWith).
const nginxConf = `daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log notice;
events {}
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	upstream backend {
		server %[3]s;
		keepalive 64;
	}
	server {
		listen %[2]s ssl http2;
		ssl_certificate %[1]s/cert.pem;
		ssl_certificate_key %[1]s/key.pem;
		%[4]s
		location = /_ready {
			return 204;
		}
		location / {
			proxy_pass http://backend;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
		}
	}
}
`

// nginxServer is a running nginx over HTTP/2 and TLS on loopback, in front of a checking backend.
type nginxServer struct {
	*proc
	url    string // https://127.0.0.1:port
	caFile string // PEM of its self-signed certificate
	caPEM  []byte
}

// findNginx returns the nginx binary: -nginx, else nginx on the PATH, else /usr/sbin/nginx (Debian's, which is off
// the PATH of users other than root). Without one the test is skipped, loudly, except in CI (CI set, or
// -require-nginx), where it fails.
func findNginx(t *testing.T) string {
	t.Helper()
	if nginxFlags.bin != "" {
		return nginxFlags.bin
	}
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	if fileExists("/usr/sbin/nginx") {
		return "/usr/sbin/nginx"
	}
	const msg = "nginx not found (not on the PATH, no /usr/sbin/nginx): install it (apt-get install -y nginx-light), or pass -nginx PATH"
	if nginxFlags.require || os.Getenv("CI") != "" {
		t.Fatal(msg + "; in CI (CI set, or -require-nginx) the nginx experiment must run")
	}
	t.Skip("SKIPPED: the nginx experiment did not run: " + msg)
	return ""
}

// startNginx writes a self-signed certificate and the configuration into dir and starts nginx in front of backend
// (host:port), on a free loopback port; it waits until nginx answers over HTTP/2. The test's cleanup stops it.
func startNginx(t *testing.T, bin, dir, backend string) *nginxServer {
	t.Helper()
	return startNginxWith(t, bin, dir, backend, "")
}

// startNginxWith is startNginx with more directives in nginx's server block, such as a keepalive_requests of its
// own.
func startNginxWith(t *testing.T, bin, dir, backend, directives string) *nginxServer {
	t.Helper()
	certPEM, keyPEM := selfSignedCert(t)
	writeFile(t, filepath.Join(dir, "cert.pem"), certPEM)
	writeFile(t, filepath.Join(dir, "key.pem"), keyPEM)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	conf := filepath.Join(dir, "nginx.conf")
	writeFile(t, conf, fmt.Appendf(nil, nginxConf, dir, addr, backend, directives))
	p := startProc(t, dir, "nginx", bin, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"))
	n := &nginxServer{proc: p, url: "https://" + addr, caFile: filepath.Join(dir, "cert.pem"), caPEM: certPEM}

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err := p.waitFor(ctx, "an HTTP/2 answer on "+addr, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.url+"/_ready", nil)
		if err != nil {
			return false, err
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return false, nil // not listening yet
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent || resp.ProtoMajor != 2 {
			return false, fmt.Errorf("GET /_ready: %s over %s, want 204 over HTTP/2", resp.Status, resp.Proto)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// selfSignedCert returns a P-256 certificate for 127.0.0.1, valid for a day, and its key, both PEM.
func selfSignedCert(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	cert, key := newCert(t, &x509.Certificate{
		Subject:               pkix.Name{CommonName: "teebody e2e nginx"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, nil)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// checkingBackend is the server behind nginx: it reads each body whole, checks it against its hdrBodySum, and
// counts by hdrRequestID the bodies that arrived intact.
type checkingBackend struct {
	srv   *httptest.Server
	wrong atomic.Int64 // bodies whose bytes did not match their checksum

	mu     sync.Mutex
	intact map[string]int // guarded by mu: hdrRequestID -> intact arrivals
}

func newCheckingBackend(t *testing.T) *checkingBackend {
	b := &checkingBackend{intact: map[string]int{}}
	b.srv = httptest.NewServer(http.HandlerFunc(b.handle))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *checkingBackend) handle(w http.ResponseWriter, r *http.Request) {
	sum := sha256.New()
	if _, err := io.Copy(sum, r.Body); err != nil {
		return // nginx went away mid-body: nothing arrived
	}
	if hex.EncodeToString(sum.Sum(nil)) != r.Header.Get(hdrBodySum) {
		b.wrong.Add(1)
		http.Error(w, "checksum mismatch", http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	b.intact[r.Header.Get(hdrRequestID)]++
	b.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// arrivals returns how many times the request id arrived intact.
func (b *checkingBackend) arrivals(id string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.intact[id]
}

// addr is the backend's host:port.
func (b *checkingBackend) addr() string { return b.srv.Listener.Addr().String() }
