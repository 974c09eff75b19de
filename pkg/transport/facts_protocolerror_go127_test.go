//go:build go1.27

package transport_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/teebody/teebody/pkg/transport"
)

// Go 1.27's HTTP/2 transport in net/http no longer sends a request again
// after the peer reset its stream with PROTOCOL_ERROR: its canRetryError
// accepts only REFUSED_STREAM and a graceful GOAWAY.
const goResendsProtocolError = false

// Go 1.27 returns the stream error of a peer's PROTOCOL_ERROR without a
// call of GetBody, so a write whose body was not kept, applied and then
// reset, fails with an error that is no proof (Go 1.26: see
// facts_protocolerror_go126_test.go).
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
		t.Fatal("RoundTrip succeeded; want the stream error")
	}
	if want := "PROTOCOL_ERROR; received from peer"; !strings.HasSuffix(err.Error(), want) || transport.ShouldRetryLater(err) {
		t.Errorf("RoundTrip: %v; want the stream error, ending with %q, which is no proof", err, want)
	}
	if n := u.applied.Load(); n != 1 {
		t.Errorf("the upstream applied the write %d times, want once", n)
	}
	drain(t, tr)
}
