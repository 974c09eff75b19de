package serve

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
	"net"
	"os"
	"time"
)

// ErrCert reports a certificate that could not be made or loaded.
var ErrCert = errors.New("serve: certificate")

// Pair is a serving certificate and the PEM a client trusts it by (the
// kubeconfig's certificate-authority-data).
type Pair struct {
	Cert   tls.Certificate
	CAData []byte
}

// SelfSigned returns a fresh serving certificate for localhost, 127.0.0.1
// and ::1, signed by a fresh CA whose PEM is CAData.
func SelfSigned() (Pair, error) {
	ca, err := NewCA()
	if err != nil {
		return Pair{}, err
	}
	return ca.Server()
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

// CA is a private ECDSA P-256 certificate authority. Everything it makes
// is valid from an hour ago for a day. Its methods are safe for concurrent
// use.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// NewCA returns a fresh certificate authority.
func NewCA() (*CA, error) {
	tmpl := template("teebody demo CA")
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid, tmpl.IsCA = true, true
	der, key, err := issue(tmpl, nil)
	if err != nil {
		return nil, err
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

// Server returns a serving certificate for localhost, 127.0.0.1 and ::1;
// CAData is the CA's PEM.
func (ca *CA) Server() (Pair, error) {
	tmpl := template("teebody demo")
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	tmpl.DNSNames = []string{"localhost"}
	tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	der, key, err := issue(tmpl, ca)
	if err != nil {
		return Pair{}, err
	}
	return Pair{Cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, CAData: ca.pem}, nil
}

// Client returns a client certificate for user name and its key, in PEM: a
// kubeconfig's client-certificate-data and client-key-data.
func (ca *CA) Client(name string) (certPEM, keyPEM []byte, err error) {
	tmpl := template(name)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	der, key, err := issue(tmpl, ca)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: key: %w", ErrCert, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

// template is a certificate template for subject cn, valid from an hour ago
// for a day; x509.CreateCertificate draws its serial number.
func template(cn string) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		Subject:   pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour),
		NotAfter:  now.Add(24 * time.Hour),
		KeyUsage:  x509.KeyUsageDigitalSignature,
	}
}

// issue signs tmpl with a fresh key: by ca, or by that key itself when ca
// is nil. It returns the certificate's DER and the key.
func issue(tmpl *x509.Certificate, ca *CA) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: key: %w", ErrCert, err)
	}
	parent, parentKey := tmpl, key
	if ca != nil {
		parent, parentKey = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: sign: %w", ErrCert, err)
	}
	return der, key, nil
}
