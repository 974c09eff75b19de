//go:build go1.27 && !http2legacy

//lint:file-ignore SA1019 the test pins what the deprecated http2.ConfigureTransports does on this Go release.

package transport_test

import (
	"net/http"
	"testing"

	"golang.org/x/net/http2"
)

// Pins Go 1.27: golang.org/x/net/http2's Transport, used directly, is now a
// wrapper around net/http's, so fact 2 holds for it too: some GetBody
// results are never read and never closed. (On Go 1.26 its own
// implementation closes them all: facts_go126_test.go.)
func TestFactXnetWrapsNetHTTP(t *testing.T) {
	all := getBodyResults(t, func(u *upstream) http.RoundTripper { return xh2Transport(t, u) })
	t.Logf("GetBody results: %d, never read nor closed: %d", len(all), abandoned(all))
	if abandoned(all) == 0 {
		t.Errorf("every GetBody result was read or closed, as x/net/http2's own transport does on Go 1.26; want some abandoned")
	}
}

// Pins Go 1.27: ConfigureTransports no longer registers anything in
// TLSNextProto; it only turns HTTP/2 on in the Transport's Protocols, and
// net/http serves it with its own implementation.
func TestFactConfigureTransportsNoRegistration(t *testing.T) {
	t1 := &http.Transport{}
	if _, err := http2.ConfigureTransports(t1); err != nil {
		t.Fatalf("ConfigureTransports: %v", err)
	}
	if _, ok := t1.TLSNextProto["h2"]; ok {
		t.Errorf("ConfigureTransports registered \"h2\" in TLSNextProto, want nothing")
	}
	if t1.Protocols == nil {
		t.Fatalf("ConfigureTransports left Protocols nil")
	}
	if !t1.Protocols.HTTP2() {
		t.Errorf("ConfigureTransports left HTTP/2 off")
	}
}
