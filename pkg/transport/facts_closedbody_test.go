package transport_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// closedBody is a request body that an earlier attempt closed: every Read
// fails with err.
type closedBody struct{ err error }

func (b closedBody) Read([]byte) (int, error) { return 0, b.err }
func (b closedBody) Close() error             { return nil }

// Go's HTTP/2 transport writes a request's headers before it reads its
// body. Without GetBody it resends the same body when the first attempt's
// stream was never opened (errClientConnUnusable), and that attempt closed
// the body. So the resend's read of the closed body fails only once the
// upstream has the request, and a handler that acts on the headers alone
// has acted: such a failure is no proof for ShouldRetryLater, in each of
// the texts a closed inbound body gives.
func TestFactClosedBodyResendReachesUpstream(t *testing.T) {
	for _, bodyErr := range []error{
		errors.New("ReverseProxy does an invalid Read on closed Body"), // Go 1.26's ReverseProxy
		http.ErrBodyReadAfterClose,                                     // an HTTP/1 server's body
		errors.New("body closed by handler"),                           // an HTTP/2 server's body
	} {
		t.Run(bodyErr.Error(), func(t *testing.T) {
			reached := make(chan string, 1)
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached <- r.Method + " " + r.URL.Path // acts on the headers alone
			}), proxytest.Options{})
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/apply", closedBody{bodyErr})
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = 1 << 10
			resp, err := transportTo(t, srv).RoundTrip(req)
			if err == nil {
				resp.Body.Close() // the handler's answer came first
			} else if transport.ShouldRetryLater(err) {
				t.Errorf("ShouldRetryLater(%v) = true; want false: the upstream had the request", err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			select {
			case got := <-reached:
				if !strings.HasPrefix(got, "POST /apply") {
					t.Errorf("the upstream got %q", got)
				}
			case <-ctx.Done():
				t.Fatalf("the upstream never got the request (RoundTrip: %v): the body is read before the headers", err)
			}
		})
	}
}
