package certs_test

import (
	"crypto/tls"
	"crypto/x509"
	"testing"

	"github.com/teebody/teebody/cmd/demo/internal/certs"
)

// TestCA: the CA's serving certificate is valid for loopback under the CA
// alone, its client certificate for client authentication, and another
// CA's pool trusts neither.
func TestCA(t *testing.T) {
	ca, err := certs.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	other, err := certs.NewCA()
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
