//go:build !go1.27 || http2legacy

//lint:file-ignore SA1019 the test pins what the deprecated http2.ConfigureTransports does on this Go release.

package transport_test

import (
	"net/http"
	"testing"

	"golang.org/x/net/http2"
)

// Pins Go 1.26 (and -tags http2legacy on 1.27): golang.org/x/net/http2's
// own Transport, used directly, reads or closes every GetBody result it
// takes; only net/http's abandons some (fact 2). On Go 1.27 it wraps
// net/http's and abandons some too (facts_go127_test.go).
func TestFactXnetClosesEveryGetBody(t *testing.T) {
	all := getBodyResults(t, func(u *upstream) http.RoundTripper { return xh2Transport(t, u) })
	t.Logf("GetBody results: %d, never read nor closed: %d", len(all), abandoned(all))
	if n := abandoned(all); n != 0 {
		t.Errorf("%d GetBody results never read nor closed by x/net/http2's own transport, want 0", n)
	}
}

// Pins Go 1.26: ConfigureTransports registers x/net/http2 for "h2" in the
// net/http Transport's TLSNextProto. On Go 1.27 it registers nothing there.
func TestFactConfigureTransportsRegistersH2(t *testing.T) {
	t1 := &http.Transport{}
	if _, err := http2.ConfigureTransports(t1); err != nil {
		t.Fatalf("ConfigureTransports: %v", err)
	}
	if _, ok := t1.TLSNextProto["h2"]; !ok {
		t.Errorf("TLSNextProto has no \"h2\" after ConfigureTransports")
	}
}
