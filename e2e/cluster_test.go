//go:build unix

package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// goawayChance is the largest chance the API server accepts, the one EKS runs with.
const goawayChance = "0.02"

// startupTimeout bounds each server's start; a cold kube-apiserver on a busy 2-core machine needs well under a
// minute.
const startupTimeout = 3 * time.Minute

// cluster is an etcd and a kube-apiserver on loopback, started by startCluster and stopped by its cleanups.
type cluster struct {
	dir        string // logs, keys, certificates and the kubeconfig
	etcdURL    string // the client URL of its etcd
	url        string // https://127.0.0.1:port of the API server
	token      string // bearer token of a system:masters user
	caPEM      []byte // what the kubeconfig trusts: the API server's self-signed chain from its cert dir
	kubeconfig string
	apiserver  *proc
}

// freePort returns a loopback TCP port that was free a moment ago. Servers that get it are started right away;
// a lost race shows as a start-up failure with the server's own message in its log.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// binary returns the path of bin/name, failing the test if build.sh has not built it.
func binary(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing (%v): run ./build.sh in e2e, or make e2e", p, err)
	}
	return p
}

// clusterOptions varies the kube-apiserver that startClusterWith starts.
type clusterOptions struct {
	binary   string   // its name in bin/; "" means kube-apiserver
	noGoaway bool     // leaves --goaway-chance out
	args     []string // more flags
}

// startCluster starts etcd and kube-apiserver --goaway-chance, waits until the API server is ready, and writes an
// admin kubeconfig. Their logs and the kubeconfig go to dir; their data, keys and certificates to a temporary
// folder. Both processes are stopped by the test's cleanups, in reverse order.
func startCluster(t *testing.T, dir string) *cluster {
	t.Helper()
	return startClusterWith(t, dir, clusterOptions{})
}

// startClusterWith is startCluster with the API server that o describes.
func startClusterWith(t *testing.T, dir string, o clusterOptions) *cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), startupTimeout)
	defer cancel()
	state := t.TempDir()

	etcdURL := startEtcd(t, ctx, dir, filepath.Join(state, "etcd"))

	c := &cluster{dir: dir, etcdURL: etcdURL, token: rand.Text()}
	certDir := filepath.Join(state, "certs")
	tokens := filepath.Join(state, "tokens.csv")
	writeFile(t, tokens, []byte(c.token+",e2e-admin,e2e-admin-uid,system:masters\n"))
	saKey, saPub := writeServiceAccountKeys(t, state)

	port := freePort(t)
	c.url = "https://127.0.0.1:" + strconv.Itoa(port)
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + certDir,
		"--endpoint-reconciler-type=none",
		"--authorization-mode=AlwaysAllow",
		"--token-auth-file=" + tokens,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saPub,
		"--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--v=1", // prints every flag as parsed (FLAG: --name="value"), which checkGoawayFlag reads
	}
	if !o.noGoaway {
		args = append(args, "--goaway-chance="+goawayChance)
	}
	if o.binary == "" {
		o.binary = "kube-apiserver"
	}
	c.apiserver = startProc(t, dir, o.binary, binary(t, o.binary), append(args, o.args...)...)

	// The server writes its self-signed chain into certDir before it listens; trust only that. The file is read
	// anew on each try, in case the first read caught it half written.
	certFile := filepath.Join(certDir, "apiserver.crt")
	err := c.apiserver.waitFor(ctx, "/readyz", func(ctx context.Context) (bool, error) {
		b, err := os.ReadFile(certFile)
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !x509.NewCertPool().AppendCertsFromPEM(b) {
			return false, nil
		}
		c.caPEM = b
		client, closeClient := c.newClient(t, nil)
		defer closeClient()
		code, _, err := c.get(ctx, client, "/readyz")
		return err == nil && code == http.StatusOK, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c.kubeconfig = filepath.Join(dir, "kubeconfig")
	writeFile(t, c.kubeconfig, c.kubeconfigYAML())
	t.Logf("kube-apiserver ready at %s; kubeconfig %s", c.url, c.kubeconfig)
	return c
}

// startEtcd starts a one-member etcd on two free loopback ports, its log in dir and its data in dataDir, without
// fsync (the data is thrown away), and returns its client URL once /health says so.
func startEtcd(t *testing.T, ctx context.Context, dir, dataDir string) string {
	t.Helper()
	clientURL := "http://127.0.0.1:" + strconv.Itoa(freePort(t))
	peerURL := "http://127.0.0.1:" + strconv.Itoa(freePort(t))
	p := startProc(t, dir, "etcd", binary(t, "etcd"),
		"--name=e2e",
		"--data-dir="+dataDir,
		"--listen-client-urls="+clientURL,
		"--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=e2e="+peerURL,
		"--unsafe-no-fsync",
		"--log-level=warn",
	)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	err := p.waitFor(ctx, "/health", func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientURL+"/health", nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		var health struct{ Health string }
		err = json.NewDecoder(resp.Body).Decode(&health)
		return err == nil && health.Health == "true", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return clientURL
}

// writeServiceAccountKeys writes a fresh RSA key pair for service-account tokens and returns the paths of the
// private and the public key.
func writeServiceAccountKeys(t *testing.T, dir string) (key, pub string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	key, pub = filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	writeFile(t, key, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	writeFile(t, pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))
	return key, pub
}

// kubeconfigYAML is an admin kubeconfig for the cluster: bearer token, the server's CA, namespace default.
func (c *cluster) kubeconfigYAML() []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: e2e-admin
  user:
    token: %s
contexts:
- name: e2e
  context:
    cluster: e2e
    user: e2e-admin
    namespace: default
current-context: e2e
`, c.url, base64.StdEncoding.EncodeToString(c.caPEM), c.token)
}

// newClient returns an HTTP/2 client of the API server that trusts only its CA and authenticates with the token,
// and a function that closes its idle connections. dials, when not nil, counts the TCP connections it opens.
func (c *cluster) newClient(t testing.TB, dials *atomic.Int64) (*http.Client, func()) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.caPEM) {
		t.Fatal("no certificate in the API server's apiserver.crt")
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials != nil {
				dials.Add(1)
			}
			return dialer.DialContext(ctx, network, addr)
		},
	}
	return &http.Client{Transport: bearer{c.token, tr}, Timeout: 30 * time.Second}, tr.CloseIdleConnections
}

// bearer adds an Authorization header to a clone of each request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// get fetches path and returns the status code and (at most 1 MiB of) the body; the response must be HTTP/2,
// since the GOAWAY filter acts on HTTP/2 requests only.
func (c *cluster) get(ctx context.Context, client *http.Client, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url+path, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err == nil && resp.ProtoMajor != 2 {
		err = fmt.Errorf("GET %s: answered over %s, want HTTP/2", path, resp.Proto)
	}
	return resp.StatusCode, body, err
}

// flagLine matches the API server's own record of a parsed flag, printed at --v=1 before it starts serving.
var flagLine = regexp.MustCompile(`FLAG: --goaway-chance="([^"]*)"`)

// checkGoawayFlag reads the chance that the running API server parsed from its log.
func (c *cluster) checkGoawayFlag(t *testing.T) {
	t.Helper()
	log, err := os.ReadFile(c.apiserver.logPath)
	if err != nil {
		t.Fatal(err)
	}
	m := flagLine.FindSubmatch(log)
	if m == nil {
		t.Fatalf("kube-apiserver's log %s has no FLAG line for --goaway-chance", c.apiserver.logPath)
	}
	if string(m[1]) != goawayChance {
		t.Fatalf("kube-apiserver parsed --goaway-chance=%s, want %s", m[1], goawayChance)
	}
	t.Logf("kube-apiserver parsed --goaway-chance=%s", m[1])
}

// probeGoaways sends n sequential GETs over one HTTP/2 client and returns how many connections the client had to
// open. The server answers a request it picked for a GOAWAY with Connection: close, which Go's HTTP/2 server turns
// into a graceful GOAWAY; the client then opens a new connection for the next request. So every connection but
// the first is one GOAWAY: about n*chance of them, and none at all if the filter were off.
func (c *cluster) probeGoaways(t *testing.T, n int) int64 {
	t.Helper()
	var dials atomic.Int64
	client, closeClient := c.newClient(t, &dials)
	defer closeClient()
	for i := range n {
		code, body, err := c.get(t.Context(), client, "/version")
		if err != nil || code != http.StatusOK {
			t.Fatalf("GET /version #%d: %d %v %s", i, code, err, body)
		}
	}
	return dials.Load() - 1
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
