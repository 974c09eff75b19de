package transport_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// postReporting returns a POST of body to url whose context carries r.
func postReporting(t *testing.T, url string, body []byte, r *transport.Report) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(transport.WithReport(context.Background(), r), http.MethodPost, url, io.NopCloser(bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	return req
}

// roundTripAndClose sends req through tr and closes the response's body.
func roundTripAndClose(tr http.RoundTripper, req *http.Request) error {
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return err
}

// TestReportReplayed checks the Report of a request that the upstream's
// first connection refuses with a graceful GOAWAY: two sends, though the
// HTTP/2 transport asks GetBody for a body more often than it sends one.
func TestReportReplayed(t *testing.T) {
	upstream := serve(t, http.HandlerFunc(countBytes), proxytest.Options{RefuseEvery: math.MaxInt64})
	tr := transport.New(transportTo(t, upstream), transport.DefaultConfig())
	body := bytes.Repeat([]byte("r"), 100<<10)

	var r transport.Report
	if err := roundTripAndClose(tr, postReporting(t, upstream.URL, body, &r)); err != nil {
		t.Fatal(err)
	}
	if g := upstream.Goaways(); g != 1 {
		t.Fatalf("the upstream sent %d GOAWAYs; want 1", g)
	}
	want := transport.Report{Buffered: true, Attempts: 2, PeakBytes: r.PeakBytes}
	if r != want || r.PeakBytes < int64(len(body)) {
		t.Fatalf("Report = %+v; want %+v with PeakBytes >= %d", r, want, len(body))
	}
	if served := tr.Stats().ReplaysServed; served < 2 {
		t.Fatalf("ReplaysServed = %d; the test needs GetBody called more often than the body was sent", served)
	}
}

// TestReportRefused checks the Report of a request whose replay is refused:
// its body is over the per-request limit. The upstream refuses only once it
// has more than the limit, so the body has outgrown it when the refusal
// lands, however busy the machine.
func TestReportRefused(t *testing.T) {
	cfg := transport.DefaultConfig()
	cfg.PerRequestBytes = 64 << 10
	upstream := serve(t, http.HandlerFunc(countBytes), proxytest.Options{RefuseEvery: 1, RefuseAfter: cfg.PerRequestBytes})
	tr := transport.New(transportTo(t, upstream), cfg)

	var r transport.Report
	err := roundTripAndClose(tr, postReporting(t, upstream.URL, bytes.Repeat([]byte("r"), 1<<20), &r))
	if !errors.Is(err, teebody.ErrNotReplayable) {
		t.Fatalf("RoundTrip: %v; want an error matching ErrNotReplayable", err)
	}
	if !r.Buffered || r.Attempts != 1 || r.Refused != teebody.ReasonTooLarge || r.PeakBytes > cfg.PerRequestBytes {
		t.Fatalf("Report = %+v; want Buffered, 1 attempt, refused %v, PeakBytes <= %d", r, teebody.ReasonTooLarge, cfg.PerRequestBytes)
	}
}

// TestReportPassThrough checks the Reports of requests that pass through.
func TestReportPassThrough(t *testing.T) {
	upstream := serve(t, http.HandlerFunc(countBytes), proxytest.Options{})
	tr := transport.New(transportTo(t, upstream), transport.DefaultConfig())

	r := transport.Report{Attempts: 7} // RoundTrip overwrites it whole
	req, _ := http.NewRequestWithContext(transport.WithReport(context.Background(), &r), http.MethodGet, upstream.URL, nil)
	if err := roundTripAndClose(tr, req); err != nil {
		t.Fatal(err)
	}
	if want := (transport.Report{PassThrough: transport.PassThroughNoBody}); r != want {
		t.Fatalf("GET: Report = %+v; want %+v", r, want)
	}

	req = postReporting(t, upstream.URL, []byte("x"), &r)
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("x")), nil }
	if err := roundTripAndClose(tr, req); err != nil {
		t.Fatal(err)
	}
	if want := (transport.Report{PassThrough: transport.PassThroughGetBodySet}); r != want {
		t.Fatalf("POST with GetBody: Report = %+v; want %+v", r, want)
	}
}

// TestReportNested checks that a Report does not hide another one that the
// context already carries: RoundTrip fills in both.
func TestReportNested(t *testing.T) {
	upstream := serve(t, http.HandlerFunc(countBytes), proxytest.Options{RefuseEvery: math.MaxInt64})
	tr := transport.New(transportTo(t, upstream), transport.DefaultConfig())

	var outer, inner transport.Report
	req := postReporting(t, upstream.URL, bytes.Repeat([]byte("n"), 10<<10), &outer)
	req = req.WithContext(transport.WithReport(req.Context(), &inner))
	if err := roundTripAndClose(tr, req); err != nil {
		t.Fatal(err)
	}
	if g := upstream.Goaways(); outer != inner || inner.Attempts != 2 || g != 1 {
		t.Fatalf("outer Report %+v, inner %+v after %d GOAWAYs; want both filled in, with 2 attempts after 1", outer, inner, g)
	}
}

// TestReportAnsweredBeforeRead checks that a send counts when a response
// comes before the inner RoundTripper has read the body, as when an HTTP/2
// upstream answers first.
func TestReportAnsweredBeforeRead(t *testing.T) {
	start, read := make(chan struct{}), make(chan struct{})
	inner := roundTripFunc(func(out *http.Request) (*http.Response, error) {
		go func() { // the body goes out after the response, as HTTP/2 may send it
			defer close(read)
			<-start
			io.Copy(io.Discard, out.Body)
			out.Body.Close()
		}()
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: out}, nil
	})
	tr := transport.New(inner, transport.DefaultConfig())

	var r transport.Report
	resp, err := tr.RoundTrip(postReporting(t, "http://127.0.0.1/", []byte("early"), &r))
	if err != nil {
		t.Fatal(err)
	}
	close(start)
	resp.Body.Close()
	<-read
	if !r.Buffered || r.Attempts != 1 {
		t.Fatalf("Report = %+v; want Buffered and 1 attempt", r)
	}
}
