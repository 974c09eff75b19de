package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// CA is a private certificate authority, valid for a day, that signs
// serving certificates for loopback and client certificates: a backend
// with a CA of its own that authenticates its clients by certificate, as
// the kube-aggregator's API services and the kubelet are. Its methods are
// safe for concurrent use.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// NewCA returns a fresh ECDSA P-256 certificate authority.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("%w: key: %w", ErrCert, err)
	}
	tmpl, err := template("teebody demo CA")
	if err != nil {
		return nil, err
	}
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid = true
	tmpl.IsCA = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("%w: sign: %w", ErrCert, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCert, err)
	}
	return &CA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// PEM is the CA's certificate, what a client or a server trusts it by.
func (ca *CA) PEM() []byte { return ca.pem }

// Pool is a certificate pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Server returns a serving certificate for localhost, 127.0.0.1 and ::1
// signed by the CA; CAData is the CA's PEM.
func (ca *CA) Server() (Pair, error) {
	tmpl, err := template("teebody demo backend")
	if err != nil {
		return Pair{}, err
	}
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	tmpl.DNSNames = []string{"localhost"}
	tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	return ca.sign(tmpl)
}

// Client returns a client certificate for user name signed by the CA, and
// its key, in PEM: a kubeconfig's client-certificate-data and
// client-key-data.
func (ca *CA) Client(name string) (certPEM, keyPEM []byte, err error) {
	tmpl, err := template(name)
	if err != nil {
		return nil, nil, err
	}
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	p, err := ca.sign(tmpl)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(p.Cert.PrivateKey)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: key: %w", ErrCert, err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.Cert.Certificate[0]})
	return certPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

// sign issues a certificate of tmpl with a fresh key.
func (ca *CA) sign(tmpl *x509.Certificate) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("%w: key: %w", ErrCert, err)
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return Pair{}, fmt.Errorf("%w: sign: %w", ErrCert, err)
	}
	return Pair{Cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, CAData: ca.pem}, nil
}

// template is a certificate template for subject cn, valid from an hour ago
// for a day, with a random serial number.
func template(cn string) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("%w: serial: %w", ErrCert, err)
	}
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
	}, nil
}
