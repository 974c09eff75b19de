package certs_test

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/teebody/teebody/cmd/demo/internal/certs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func verify(t *testing.T, p certs.Pair, host string) error {
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
	p, err := certs.SelfSigned()
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
	q, _ := certs.SelfSigned()
	if err := verify(t, q, "127.0.0.1"); err != nil || string(q.CAData) == string(p.CAData) {
		t.Error("a second certificate must be a new one")
	}
}

func TestLoad(t *testing.T) {
	p, err := certs.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.MarshalPKCS8PrivateKey(p.Cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	if err := os.WriteFile(certFile, p.CAData, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := certs.Load(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := verify(t, got, "localhost"); err != nil {
		t.Fatal(err)
	}
	if _, err := certs.Load(certFile, filepath.Join(dir, "missing.pem")); !errors.Is(err, certs.ErrCert) {
		t.Fatalf("err = %v, want ErrCert", err)
	}
}
