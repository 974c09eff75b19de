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
// body: a request whose body's first Read fails has reached the upstream,
// and RoundTrip returns the body's error. Without GetBody the transport
// resends the same body when the first attempt's stream was never opened
// (errClientConnUnusable), and that attempt closed the body, so the
// resend is such a request: a handler that acts on the headers alone has
// acted. Its failure is no proof for ShouldRetryLater, in each of the texts
// a closed inbound body gives.
func TestFactClosedBodyResendReachesUpstream(t *testing.T) {
	for _, bodyErr := range []error{
		errors.New("ReverseProxy does an invalid Read on closed Body"), // Go 1.26's ReverseProxy
		http.ErrBodyReadAfterClose,                                     // an HTTP/1 server's body
		errors.New("body closed by handler"),                           // an HTTP/2 server's body
	} {
		t.Run(bodyErr.Error(), func(t *testing.T) {
			reached := make(chan string, 1)
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached <- r.Proto + " " + r.Method + " " + r.URL.Path // it could act on the headers alone
				<-r.Context().Done()                                   // answer nothing before the client's reset
			}), proxytest.Options{})
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/apply", closedBody{bodyErr})
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = 1 << 10
			_, err = transportTo(t, srv).RoundTrip(req)
			if !errors.Is(err, bodyErr) {
				t.Fatalf("RoundTrip: %v; want the body's error", err)
			}
			if transport.ShouldRetryLater(err) {
				t.Errorf("ShouldRetryLater(%v) = true; want false: the upstream had the request", err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			select {
			case got := <-reached:
				if got != "HTTP/2.0 POST /apply" {
					t.Errorf("the upstream got %q, want HTTP/2.0 POST /apply", got)
				}
			case <-ctx.Done():
				t.Fatal("the upstream never got the request: the body is read before the headers")
			}
		})
	}
}

// The HTTP/2 server's error for a read of a request body after its handler
// closed it is "body closed by handler", the text that adaptive mode takes
// for a trace of GOAWAY when a resend meets it.
func TestFactClosedH2ServerBodyText(t *testing.T) {
	errc := make(chan error, 1)
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body.Close()
		_, err := r.Body.Read(make([]byte, 1))
		errc <- err
	}), proxytest.Options{})
	resp, err := transportTo(t, srv).RoundTrip(httptestPost(t, srv.URL, "a body"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("served over %s, want HTTP/2", resp.Proto)
	}
	if err := <-errc; err == nil || err.Error() != "body closed by handler" {
		t.Errorf("the HTTP/2 server body's Read after Close: %v, want \"body closed by handler\"", err)
	}
}

// httptestPost is a POST of body to url.
func httptestPost(t *testing.T, url, body string) *http.Request {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}
