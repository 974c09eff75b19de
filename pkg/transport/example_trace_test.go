package transport_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// goawayOnce is an inner RoundTripper that does what Go's HTTP/2 transport
// does when a graceful GOAWAY refuses a stream whose body it has started
// to send: it asks GetBody for the body again, and sends that.
type goawayOnce struct{}

func (goawayOnce) RoundTrip(req *http.Request) (*http.Response, error) {
	req.Body.Read(make([]byte, 512)) // a piece goes out, then the GOAWAY comes
	req.Body.Close()
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	defer body.Close()
	if _, err := io.Copy(io.Discard, body); err != nil {
		return nil, err
	}
	return &http.Response{Status: "200 OK", StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
}

// Hooks run as things happen to a request's body, each on the goroutine
// where it happens. Here the inner transport sends the body, then sends a
// replay of it after a GOAWAY.
func ExampleWithBodyTrace() {
	tr := transport.New(goawayOnce{}, transport.DefaultConfig())
	trace := &transport.BodyTrace{
		PassedThrough: func(r transport.PassThroughReason) { fmt.Println("passed through:", r) },
		BodyKept:      func() { fmt.Println("body kept") },
		SendStart:     func(attempt int) { fmt.Println("send", attempt) },
		GotReplay:     func() { fmt.Println("replay handed out") },
		ReplayRefused: func(r teebody.Reason) { fmt.Println("replay refused:", r) },
		BodyReleased:  func() { fmt.Println("body released") },
	}
	ctx := transport.WithBodyTrace(context.Background(), trace)

	body := io.NopCloser(strings.NewReader(strings.Repeat("x", 4<<10))) // no GetBody, as a proxy's inbound body
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://upstream.example/", body)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	tr.Drain(context.Background()) // waits for BodyReleased
	fmt.Println(resp.Status)
	// Output:
	// body kept
	// send 1
	// replay handed out
	// send 2
	// body released
	// 200 OK
}
