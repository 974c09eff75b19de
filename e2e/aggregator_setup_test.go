//go:build unix

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The aggregated API: k8s.io/sample-apiserver's group, served by bin/wardle.
const (
	wardleGroup      = "wardle.example.com"
	wardleVersion    = "v1alpha1"
	wardleAPIService = wardleVersion + "." + wardleGroup
	flundersPath     = "/apis/" + wardleGroup + "/" + wardleVersion + "/namespaces/default/flunders"
)

// frontProxyClient is the name in the client certificate that kube-apiserver's aggregator presents to the
// aggregated API server, which trusts only that name (--requestheader-allowed-names).
const frontProxyClient = "front-proxy-client"

// aggregatorArgs writes a front-proxy CA and a client certificate it signed into dir, and returns kube-apiserver's
// flags that make its aggregator authenticate with that certificate and pass the user on in X-Remote-* headers,
// and the certificate. kube-apiserver publishes the CA and the header names in
// kube-system/extension-apiserver-authentication, where the aggregated API server reads them.
func aggregatorArgs(t *testing.T, dir string) ([]string, tls.Certificate) {
	t.Helper()
	ca, caKey := newCert(t, &x509.Certificate{
		Subject:               pkix.Name{CommonName: "e2e-front-proxy-ca"},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, nil)
	client, key := newCert(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: frontProxyClient},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, caKey)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "front-proxy-ca.crt")
	certFile := filepath.Join(dir, "front-proxy-client.crt")
	keyFile := filepath.Join(dir, "front-proxy-client.key")
	writeFile(t, caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}))
	writeFile(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: client.Raw}))
	writeFile(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	cert := tls.Certificate{Certificate: [][]byte{client.Raw}, PrivateKey: key}
	return []string{
		"--proxy-client-cert-file=" + certFile,
		"--proxy-client-key-file=" + keyFile,
		"--requestheader-client-ca-file=" + caFile,
		"--requestheader-allowed-names=" + frontProxyClient,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
	}, cert
}

// newCert returns a certificate from tmpl, valid for a day, for a new P-256 key, signed by parent's key, or by its
// own key if parent is nil.
func newCert(t *testing.T, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// startWardle starts bin/wardle (sample-apiserver with --goaway-chance) on a free loopback port, storing in the
// cluster's etcd under its own prefix and delegating authentication and authorization to the cluster's API server,
// and returns its port once its /readyz answers.
func startWardle(t *testing.T, c *cluster, dir string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), startupTimeout)
	defer cancel()
	port := freePort(t)
	p := startProc(t, dir, "wardle", binary(t, "wardle"),
		"--goaway-chance="+goawayChance,
		"--etcd-servers="+c.etcdURL,
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+t.TempDir(),
		"--kubeconfig="+c.kubeconfig,
		"--authentication-kubeconfig="+c.kubeconfig,
		"--authorization-kubeconfig="+c.kubeconfig,
	)
	client := insecureH2Client()
	defer client.CloseIdleConnections()
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/readyz"
	err := p.waitFor(ctx, "/readyz", func(ctx context.Context) (bool, error) {
		code, _, err := do(ctx, client, http.MethodGet, url, nil)
		return err == nil && code == http.StatusOK, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// registerWardle creates the ExternalName Service default/wardle, whose name is 127.0.0.1, and the APIService that
// sends wardle.example.com to its port, then waits until the aggregator reports the APIService Available and
// serves its flunders. Without --enable-aggregator-routing the aggregator resolves a Service by its type
// (k8s.io/apiserver's proxy.ResolveCluster): an ExternalName Service becomes its externalName and the
// APIService's port, so the aggregator dials 127.0.0.1:port.
func registerWardle(t *testing.T, c *cluster, port int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), startupTimeout)
	defer cancel()
	client, closeClient := c.newClient(t, nil)
	defer closeClient()
	post := func(path, body string) {
		t.Helper()
		code, b, err := do(ctx, client, http.MethodPost, c.url+path, []byte(body))
		if err != nil || code != http.StatusCreated {
			t.Fatalf("POST %s: %d %v %s", path, code, err, b)
		}
	}
	post("/api/v1/namespaces/default/services", `{"apiVersion":"v1","kind":"Service",
		"metadata":{"name":"wardle"},"spec":{"type":"ExternalName","externalName":"127.0.0.1"}}`)
	post("/apis/apiregistration.k8s.io/v1/apiservices", fmt.Sprintf(`{"apiVersion":"apiregistration.k8s.io/v1",
		"kind":"APIService","metadata":{"name":%q},"spec":{"group":%q,"version":%q,
		"service":{"namespace":"default","name":"wardle","port":%d},
		"insecureSkipTLSVerify":true,"groupPriorityMinimum":1000,"versionPriority":15}}`,
		wardleAPIService, wardleGroup, wardleVersion, port))

	err := c.apiserver.waitFor(ctx, "APIService "+wardleAPIService+" Available", func(ctx context.Context) (bool, error) {
		code, b, err := do(ctx, client, http.MethodGet, c.url+"/apis/apiregistration.k8s.io/v1/apiservices/"+wardleAPIService, nil)
		if err != nil || code != http.StatusOK {
			return false, nil
		}
		var s struct {
			Status struct {
				Conditions []struct{ Type, Status, Message string }
			}
		}
		if err := json.Unmarshal(b, &s); err != nil {
			return false, err
		}
		for _, cond := range s.Status.Conditions {
			if cond.Type == "Available" && cond.Status == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = c.apiserver.waitFor(ctx, "GET "+flundersPath, func(ctx context.Context) (bool, error) {
		code, _, err := do(ctx, client, http.MethodGet, c.url+flundersPath, nil)
		return err == nil && code == http.StatusOK, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// wardleGoaways sends n sequential GETs of the flunders straight to wardle over one HTTP/2 client and returns how
// many connections beyond the first it had to open: one per GOAWAY (see probeGoaways). The GETs authenticate as
// the aggregator does, with its client certificate and X-Remote-User, and each must succeed: wardle answers every
// anonymous HTTP/2 request with GOAWAY (k8s.io/apiserver's UnauthenticatedHTTP2DOSMitigation), which would pass
// for its --goaway-chance. Call it once wardle has read the front-proxy CA from kube-apiserver (registerWardle).
func wardleGoaways(t *testing.T, port, n int, cert tls.Certificate) int64 {
	t.Helper()
	var dials atomic.Int64
	client := insecureH2Client()
	defer client.CloseIdleConnections()
	tr := client.Transport.(*http.Transport)
	tr.TLSClientConfig.Certificates = []tls.Certificate{cert}
	client.Transport = remoteUser{tr}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dialer.DialContext(ctx, network, addr)
	}
	url := "https://127.0.0.1:" + strconv.Itoa(port) + flundersPath
	for i := range n {
		code, b, err := do(t.Context(), client, http.MethodGet, url, nil)
		if err != nil || code != http.StatusOK {
			t.Fatalf("GET wardle %s #%d: %d %v %s", flundersPath, i, code, err, b)
		}
	}
	return dials.Load() - 1
}

// remoteUser adds the headers by which the aggregator names the user, e2e-admin of system:masters, to a clone of
// each request.
type remoteUser struct{ next http.RoundTripper }

func (u remoteUser) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Remote-User", "e2e-admin")
	r.Header.Set("X-Remote-Group", "system:masters")
	return u.next.RoundTrip(r)
}

// flagValue returns the value of --name that the process's log reports as parsed (kube-apiserver at --v=1), or
// "" if the log has no such line.
func flagValue(t *testing.T, p *proc, name string) string {
	t.Helper()
	b := tail(p.logPath, 1<<20)
	prefix := `FLAG: --` + name + `="`
	i := strings.Index(b, prefix)
	if i < 0 {
		return ""
	}
	v, _, _ := strings.Cut(b[i+len(prefix):], `"`)
	return v
}
