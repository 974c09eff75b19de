//go:build unix

package proxytest

import (
	"net"
	"strconv"
	"syscall"
	"testing"
)

// DeadAddr returns a loopback TCP address that refuses every connection
// until the test ends.
//
// A socket is bound to it and never listens. So no server of the test can
// take the port, as one can when a listener is closed to free an address:
// a proxy whose own front took its dead upstream's port would forward to
// itself without end.
func DeadAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("proxytest: socket: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("proxytest: bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("proxytest: getsockname: %v", err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}
