package testcert_test

import (
	"crypto/tls"
	"net"
	"testing"

	"github.com/teebody/teebody/internal/proxytest/testcert"
)

// A client that trusts Loopback's pool accepts the certificate for
// each loopback name, and for no other name.
func TestLoopback(t *testing.T) {
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		if err := handshake(host); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
	if handshake("example.invalid") == nil {
		t.Error("valid for a name it does not hold")
	}
}

// Each call returns the same certificate and a new pool.
func TestLoopbackOnce(t *testing.T) {
	a, poolA := testcert.Loopback()
	b, poolB := testcert.Loopback()
	if !a.Leaf.Equal(b.Leaf) || poolA == poolB {
		t.Error("want the same certificate and another pool")
	}
}

// handshake runs a TLS handshake over loopback TCP between a server with
// the loopback certificate and a client that trusts its pool and asks for
// host. It returns the client's error, or else the server's.
func handshake(host string) error {
	cert, pool := testcert.Loopback()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		s, err := ln.Accept()
		if err == nil {
			defer s.Close()
			err = tls.Server(s, &tls.Config{Certificates: []tls.Certificate{cert}}).Handshake()
		}
		done <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err == nil {
		err = tls.Client(c, &tls.Config{RootCAs: pool, ServerName: host}).Handshake()
		c.Close() // ends the server's handshake if the client's failed
	}
	ln.Close() // ends the Accept if the Dial failed
	if serr := <-done; err == nil {
		err = serr
	}
	return err
}
