// Package testcert makes a self-signed certificate for loopback, for tests
// that serve TLS. It imports the standard library alone, so that a module
// can use it without requiring the library's dependencies.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"net"
	"sync"
	"time"
)

// Loopback returns a self-signed serving certificate for localhost,
// 127.0.0.1 and ::1, with its Leaf set, and a new pool that trusts it. The
// certificate is made once per process, with a P-256 key, and is valid from
// an hour before it is made until a day after. It panics if the certificate
// cannot be made.
func Loopback() (tls.Certificate, *x509.CertPool) {
	cert := loopback()
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	return cert, pool
}

var loopback = sync.OnceValue(func() tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
})
