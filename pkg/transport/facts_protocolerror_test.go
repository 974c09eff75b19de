package transport_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/http2"
)

// resetFirst ends the first stream it is given with RST_STREAM
// PROTOCOL_ERROR, after the upstream applied its request, and answers the
// others with an empty 200.
func resetFirst(fr *http2.Framer, id uint32, n int64) bool {
	if n == 1 {
		return fr.WriteRSTStream(id, http2.ErrCodeProtocol) == nil
	}
	return answerOK(fr, id)
}

// A peer's PROTOCOL_ERROR is no proof that it did not process the stream.
// Go 1.26's HTTP/2 transport still sends the request again through
// GetBody (golang.org/issue/47635), so an upstream that applied it applies
// it twice; Go 1.27's fails the request with the stream error. GetBody is
// not told why it is called, so the Transport's cannot refuse this resend
// and serve the others (docs/design.md, "Resend only on proof").
func TestFactProtocolErrorResentThroughGetBody(t *testing.T) {
	u := newProcessingUpstream(t, resetFirst)
	req, err := http.NewRequest(http.MethodPost, u.srv.URL, bytes.NewReader([]byte("write")))
	if err != nil {
		t.Fatal(err)
	}
	getBodies := 0
	getBody := req.GetBody
	req.GetBody = func() (io.ReadCloser, error) { getBodies++; return getBody() }
	resp, err := u.srv.Client().Do(req)
	if goResendsProtocolError {
		if err != nil {
			t.Fatalf("Do: %v; want Go 1.26 to resend after PROTOCOL_ERROR", err)
		}
		resp.Body.Close()
		if n := u.applied.Load(); n != 2 || getBodies == 0 {
			t.Errorf("applied %d times with %d GetBody calls; want twice with some", n, getBodies)
		}
		return
	}
	if err == nil {
		resp.Body.Close()
		t.Fatal("Do succeeded; want Go 1.27 to fail after PROTOCOL_ERROR")
	}
	if want := "stream error: stream ID 1; PROTOCOL_ERROR; received from peer"; !strings.HasSuffix(err.Error(), want) {
		t.Errorf("Do: %v; want it to end with %q", err, want)
	}
	if n := u.applied.Load(); n != 1 || getBodies != 0 {
		t.Errorf("applied %d times with %d GetBody calls; want once with none", n, getBodies)
	}
}

// TestProtocolErrorNot429: a proxy without a replay (httputil.ReverseProxy
// on net/http's transport) whose upstream applied a write and then reset
// it with PROTOCOL_ERROR answers 502, never 429: on Go 1.26 the error is
// "http2: Transport: cannot retry err [stream error: ...; PROTOCOL_ERROR;
// received from peer] after Request.Body was written; ...", which names a
// cause that proves nothing.
func TestProtocolErrorNot429(t *testing.T) {
	u := newProcessingUpstream(t, resetFirst)
	tr := transportOver(nil)
	target, _ := url.Parse(u.srv.URL)
	f := proxyFront(t, target, u.srv.Client().Transport, tr.ErrorHandler)
	resp, _ := f.post(t, "/write", "write")
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("the client got %d, want 502", resp.StatusCode)
	}
	if n := u.applied.Load(); n != 1 {
		t.Errorf("the upstream applied the write %d times, want once", n)
	}
}
