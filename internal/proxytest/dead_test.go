//go:build unix

package proxytest

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// A dial to DeadAddr is refused, and no listener can take its port while the
// test runs.
func TestDeadAddr(t *testing.T) {
	addr := DeadAddr(t)
	if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s: %v, want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Errorf("a listener took %s", addr)
	}
}
