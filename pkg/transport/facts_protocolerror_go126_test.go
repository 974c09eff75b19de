//go:build !go1.27

package transport_test

import (
	"bytes"
	"errors"
	"net/http"
	"testing"

	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// Go 1.26's HTTP/2 transport in net/http sends a request again, through
// GetBody, after the peer reset its stream with PROTOCOL_ERROR
// (canRetryError, golang.org/issue/47635).
const goResendsProtocolError = true

// Go 1.26 asks GetBody for a replay after a peer's PROTOCOL_ERROR, which
// the peer may send after it processed the request, and returns GetBody's
// error alone. Nothing tells that call from one after REFUSED_STREAM: a
// write whose body was not kept, applied and then reset with
// PROTOCOL_ERROR, fails with teebody's refusal, and ShouldRetryLater holds
// (docs/design.md, "Resend only on proof"). Go 1.27 no longer calls
// GetBody there (golang.org/issue/77843).
func TestFactProtocolErrorRefusalIsRetryLater(t *testing.T) {
	u := newProcessingUpstream(t, resetFirst)
	cfg := quietConfig()
	cfg.PerRequestBytes = 4 << 10
	tr := transport.New(u.srv.Client().Transport, cfg)
	req, err := http.NewRequest(http.MethodPost, u.srv.URL, hiddenReader{bytes.NewReader(bytes.Repeat([]byte("w"), 32<<10))})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("RoundTrip succeeded; want GetBody's refusal")
	}
	if !errors.Is(err, teebody.ErrNotReplayable) || !transport.ShouldRetryLater(err) {
		t.Errorf("RoundTrip: %v; want teebody's refusal, for which ShouldRetryLater holds", err)
	}
	if n := u.applied.Load(); n != 1 {
		t.Errorf("the upstream applied the write %d times, want once", n)
	}
	drain(t, tr)
}
