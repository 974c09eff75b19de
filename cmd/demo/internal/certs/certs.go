// Package certs makes the self-signed serving certificates of the demo's
// loopback servers.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// ErrCert reports a certificate that could not be made or loaded.
var ErrCert = errors.New("certs: certificate")

// Pair is a serving certificate and the PEM a client trusts it by (the
// kubeconfig's certificate-authority-data).
type Pair struct {
	Cert   tls.Certificate
	CAData []byte
}

// SelfSigned returns a fresh ECDSA P-256 certificate, valid for a day, for
// localhost, 127.0.0.1 and ::1, that is its own certificate authority.
func SelfSigned() (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("%w: key: %w", ErrCert, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return Pair{}, fmt.Errorf("%w: serial: %w", ErrCert, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "teebody demo"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return Pair{}, fmt.Errorf("%w: sign: %w", ErrCert, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Pair{}, fmt.Errorf("%w: key: %w", ErrCert, err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return Pair{}, fmt.Errorf("%w: %w", ErrCert, err)
	}
	return Pair{Cert: cert, CAData: certPEM}, nil
}

// Load reads a PEM certificate and key. The certificate file's content is the
// CA data: enough for a self-signed certificate, or for clients that trust
// the serving certificate itself.
func Load(certFile, keyFile string) (Pair, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return Pair{}, fmt.Errorf("%w: %w", ErrCert, err)
	}
	ca, err := os.ReadFile(certFile)
	if err != nil {
		return Pair{}, fmt.Errorf("%w: %w", ErrCert, err)
	}
	return Pair{Cert: cert, CAData: ca}, nil
}
