package proxytest

import (
	"net/http"
	"strings"
	"testing"
)

// TestDropper: the first request of a connection gets a 200, and the
// second, on the reused connection, is read whole and dropped: the client
// sees the connection fail, and Applied counts both bodies.
func TestDropper(t *testing.T) {
	d := NewDropper(t)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	d.WarmUp(t, tr)
	// A POST without an Idempotency-Key, which net/http does not send again.
	first, err := http.NewRequest(http.MethodPost, d.URL, strings.NewReader("one"))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := tr.RoundTrip(first); err == nil {
		resp.Body.Close()
		t.Fatalf("the second request of a connection got %s; want its connection to fail", resp.Status)
	}
	second, err := http.NewRequest(http.MethodPost, d.URL, strings.NewReader("two"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(second) // on a new connection, as its first
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || d.Applied() != 2 {
		t.Errorf("the first request of a new connection: %s, %d bodies applied; want 200, 2", resp.Status, d.Applied())
	}
}
