package serve_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/teebody/teebody/cmd/demo/internal/serve"
)

// TestCA: the CA's serving certificate is valid for loopback under the CA
// alone, its client certificate for client authentication, and another
// CA's pool trusts neither.
func TestCA(t *testing.T) {
	ca, err := serve.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	other, err := serve.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Server()
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		if err := verify(t, srv, host); err != nil {
			t.Errorf("serving certificate for %s: %v", host, err)
		}
	}
	certPEM, keyPEM, err := ca.Client("teebody-proxy")
	if err != nil {
		t.Fatal(err)
	}
	client, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(client.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	clientAuth := x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if _, err := leaf.Verify(clientAuth); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if leaf.Subject.CommonName != "teebody-proxy" {
		t.Errorf("client certificate for %q, want teebody-proxy", leaf.Subject.CommonName)
	}
	clientAuth.Roots = other.Pool()
	if _, err := leaf.Verify(clientAuth); err == nil {
		t.Error("another CA trusts the client certificate")
	}
	if string(other.PEM()) == string(ca.PEM()) {
		t.Error("two CAs with one certificate")
	}
}

func verify(t *testing.T, p serve.Pair, host string) error {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(p.CAData) {
		t.Fatal("CA data holds no certificate")
	}
	leaf, err := x509.ParseCertificate(p.Cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host})
	return err
}

func TestSelfSigned(t *testing.T) {
	p, err := serve.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"127.0.0.1", "::1", "localhost"} {
		if err := verify(t, p, host); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
	if err := verify(t, p, "example.invalid"); err == nil {
		t.Error("valid for a host it does not name")
	}
	q, _ := serve.SelfSigned()
	if err := verify(t, q, "127.0.0.1"); err != nil || string(q.CAData) == string(p.CAData) {
		t.Error("a second certificate must be a new one")
	}
}

func TestLoad(t *testing.T) {
	p, err := serve.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.MarshalPKCS8PrivateKey(p.Cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.Cert.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := serve.Load(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := verify(t, got, "localhost"); err != nil {
		t.Fatal(err)
	}
	if _, err := serve.Load(certFile, filepath.Join(dir, "missing.pem")); !errors.Is(err, serve.ErrCert) {
		t.Fatalf("err = %v, want ErrCert", err)
	}
}
