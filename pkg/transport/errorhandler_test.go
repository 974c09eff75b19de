package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

func TestWriteRetryLater(t *testing.T) {
	for _, tc := range []struct {
		in   time.Duration
		want int64
	}{
		{0, 1},
		{-3 * time.Second, 1},
		{time.Nanosecond, 1},
		{time.Second, 1},
		{1500 * time.Millisecond, 2},
		{3 * time.Second, 3},
		{time.Minute, 60},
	} {
		rec := httptest.NewRecorder()
		transport.WriteRetryLater(rec, tc.in)
		res := rec.Result()
		if res.StatusCode != http.StatusTooManyRequests {
			t.Errorf("%v: status %d, want 429", tc.in, res.StatusCode)
		}
		if got := res.Header.Get("Retry-After"); got != fmt.Sprint(tc.want) {
			t.Errorf("%v: Retry-After %q, want %d", tc.in, got, tc.want)
		}
		if got := res.Header.Get("Content-Type"); got != "application/json" {
			t.Errorf("%v: Content-Type %q", tc.in, got)
		}
		checkStatusBody(t, rec.Body.Bytes(), tc.want)
	}
}

// checkStatusBody checks b is exactly the Kubernetes Status of a 429 with
// the given retryAfterSeconds, field by field, with nothing else in it.
func checkStatusBody(t *testing.T, b []byte, retryAfter int64) {
	t.Helper()
	checkStatus(t, b, http.StatusTooManyRequests, map[string]any{
		"reason":  "TooManyRequests",
		"details": map[string]any{"retryAfterSeconds": float64(retryAfter)},
	})
}

// checkStatus checks b is exactly a failure Status of the given code with a
// message and the fields of more, with nothing else in it, and returns its
// message.
func checkStatus(t *testing.T, b []byte, code int, more map[string]any) string {
	t.Helper()
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("body %q is not JSON: %v", b, err)
	}
	msg, _ := got["message"].(string)
	if msg == "" {
		t.Errorf("Status without a message: %s", b)
	}
	want := map[string]any{
		"kind":       "Status",
		"apiVersion": "v1",
		"metadata":   map[string]any{},
		"status":     "Failure",
		"message":    msg,
		"code":       float64(code),
	}
	maps.Copy(want, more)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Status body\n got %v\nwant %v", got, want)
	}
	return msg
}

func TestShouldRetryLater(t *testing.T) {
	// The texts of Go's transports (docs/design.md, facts 1, 5, 6); the
	// fact tests check that the real transports still produce them.
	goaway := errors.New("http2: Transport: cannot retry err [http2: Transport received Server's graceful shutdown GOAWAY] after Request.Body was written; define Request.GetBody to avoid this error")
	rewind := errors.New("net/http: cannot rewind body after connection loss")
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{teebody.ErrNotReplayable, true},
		{transport.RefusedReplay(t, teebody.ReasonNoBudget), true},
		{transport.RefusedReplay(t, teebody.ReasonTooLarge), true},
		{transport.RefusedReplay(t, teebody.ReasonStreamedPast), true},
		{fmt.Errorf("proxy: %w", transport.RefusedReplay(t, teebody.ReasonClosed)), true},
		{&url.Error{Op: "Post", URL: "https://x", Err: transport.RefusedReplay(t, teebody.ReasonNoBudget)}, true},
		// apimachinery's proxy transport flattens the error into a string
		// (UpgradeAwareHandler with wrapTransport true).
		{errors.New("error trying to reach service: " + transport.RefusedReplay(t, teebody.ReasonNoBudget).Error()), true},
		{errors.New("error trying to reach service: " + teebody.ErrNotReplayable.Error()), true},
		{errors.New("error trying to reach service: teebody: read on closed body"), false},
		{goaway, true},
		{&url.Error{Op: "Post", URL: "https://x", Err: goaway}, true},
		{rewind, true},
		{fmt.Errorf("wrapped: %w", rewind), true},
		{errors.New("ReverseProxy does an invalid Read on closed Body"), true},
		// A resend of a request whose inbound body the first attempt closed,
		// where nothing wraps it (Go 1.27's ReverseProxy, hand-written proxies).
		{http.ErrBodyReadAfterClose, true},
		{errors.New("body closed by handler"), true},
		{fmt.Errorf("proxy: %w", http.ErrBodyReadAfterClose), true},
		{teebody.ErrClosed, false},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{io.ErrUnexpectedEOF, false},
		{errors.New("http2: Transport received Server's graceful shutdown GOAWAY"), false}, // alone: not about the body
		{errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: read: connection reset by peer"), false},
		{errors.New("stream error: stream ID 3; INTERNAL_ERROR; received from peer"), false},
	} {
		if got := transport.ShouldRetryLater(tc.err); got != tc.want {
			t.Errorf("ShouldRetryLater(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestErrorHandler(t *testing.T) {
	var logged bytes.Buffer
	cfg := transport.DefaultConfig()
	cfg.RetryAfter = 5 * time.Second
	cfg.ErrorLog = log.New(&logged, "", 0)
	tr := transport.New(nil, cfg)
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("x"))

	rec := httptest.NewRecorder()
	tr.ErrorHandler(rec, req, fmt.Errorf("round trip: %w", transport.RefusedReplay(t, teebody.ReasonNoBudget)))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "5" {
		t.Errorf("not replayable: status %d, Retry-After %q; want 429, 5", rec.Code, rec.Header().Get("Retry-After"))
	}
	checkStatusBody(t, rec.Body.Bytes(), 5)
	if n := tr.Stats().RetryLaterWritten; n != 1 {
		t.Errorf("RetryLaterWritten = %d, want 1", n)
	}
	if logged.Len() != 0 {
		t.Errorf("a 429 was logged: %q", logged.String())
	}

	rec = httptest.NewRecorder()
	tr.ErrorHandler(rec, req, errors.New("dial tcp: connection refused"))
	if rec.Code != http.StatusBadGateway {
		t.Errorf("other error: status %d, want 502", rec.Code)
	}
	if want := "http: proxy error: dial tcp: connection refused\n"; logged.String() != want {
		t.Errorf("logged %q, want %q", logged.String(), want)
	}
	if want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"proxy error: dial tcp: connection refused","code":502}`; rec.Body.String() != want {
		t.Errorf("502 body %s, want %s", rec.Body.String(), want)
	}
	if st := tr.Stats(); st.RetryLaterWritten != 1 || st.BadGatewayWritten != 1 {
		t.Errorf("RetryLaterWritten, BadGatewayWritten = %d, %d after a 429 and a 502, want 1, 1", st.RetryLaterWritten, st.BadGatewayWritten)
	}
}

// The text ShouldRetryLater knows for an HTTP/2 server body read after its
// handler closed it is the one Go's HTTP/2 server returns.
func TestShouldRetryLaterKnowsClosedH2ServerBody(t *testing.T) {
	errc := make(chan error, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body.Close()
		_, err := r.Body.Read(make([]byte, 1))
		errc <- err
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	client := srv.Client()
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Post(srv.URL, "text/plain", strings.NewReader("a body"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("served over %s, want HTTP/2", resp.Proto)
	}
	select {
	case err = <-errc: // sent before the handler returned, so before the response
	default:
		t.Fatal("the response arrived before the handler's Read returned")
	}
	if err == nil || !transport.ShouldRetryLater(err) {
		t.Errorf("ShouldRetryLater(%v) = false for the HTTP/2 server body's read after close", err)
	}
}
