package transport_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// An empty response ends its request without the caller closing it, over
// HTTP/2 as over HTTP/1, even though HTTP/2 gives it a body of its own
// rather than http.NoBody: a caller that never closes the body of a 204
// holds no buffer once the inner transport is done with the request body
// (here the upstream ignores it, and its transport stops sending: HTTP/2
// resets the stream when the handler returns). Without that, Drain would
// wait for a Close that never comes. TestEarlyEmptyResponseUploadGoesOn
// has the upload that goes on after the response.
func TestEmptyResponseEndsRequest(t *testing.T) {
	for _, http1 := range []bool{false, true} {
		for _, status := range []int{http.StatusNoContent, http.StatusOK} {
			t.Run(strconv.FormatBool(http1)+"/"+strconv.Itoa(status), func(t *testing.T) {
				srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Length", "0")
					w.WriteHeader(status)
				}), proxytest.Options{HTTP1: http1})
				inner := srv.Transport()
				t.Cleanup(inner.CloseIdleConnections)
				tr := transport.New(inner, transport.DefaultConfig())

				req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(strings.Repeat("x", 10<<10)))
				if err != nil {
					t.Fatal(err)
				}
				req.GetBody = nil // as a proxy's inbound body: only teebody can replay it
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != status || resp.ContentLength != 0 {
					t.Fatalf("status %d, length %d; want %d, 0", resp.StatusCode, resp.ContentLength, status)
				}
				// The body is left unclosed until the end of the test, as
				// careless callers leave it; the buffer must be back already.
				defer resp.Body.Close()
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a bound on a hang, not a timing check
				defer cancel()
				if err := tr.Drain(ctx); err != nil {
					t.Fatalf("Drain with the empty response's body open: %v (%T body); want nil", err, resp.Body)
				}
				if st := tr.Stats(); st.Buffered != 1 || st.BytesHeld != 0 {
					t.Errorf("buffered %d, held %d; want 1, 0", st.Buffered, st.BytesHeld)
				}
			})
		}
	}
}
