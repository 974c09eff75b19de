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
	"net/http/httputil"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// TestErrorHandlerRetryAfter: the 429's Retry-After is Config.RetryAfter
// rounded up to whole seconds, at least 1; <= 0 means DefaultRetryAfter.
func TestErrorHandlerRetryAfter(t *testing.T) {
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
		tr := transport.New(nil, transport.Config{RetryAfter: tc.in})
		rec := httptest.NewRecorder()
		tr.Responder().Error(rec, httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/a/configmaps", nil), teebody.ErrNotReplayable)
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
		// A resend of a request whose inbound body the first attempt closed:
		// it sent the headers before its read failed.
		{errors.New("ReverseProxy does an invalid Read on closed Body"), false},
		{http.ErrBodyReadAfterClose, false},
		{errors.New("body closed by handler"), false},
		{fmt.Errorf("proxy: %w", http.ErrBodyReadAfterClose), false},
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

// errUpstream is an ordinary upstream error, whose text names the
// upstream's address: it must reach the log and no client.
var errUpstream = errors.New("dial tcp 10.96.0.1:6443: connect: connection refused")

// TestErrorHandler: whatever the path, a plain text 429 and an empty 502.
// No answer carries the error's text; the 502's error is logged, the 429's
// is not.
func TestErrorHandler(t *testing.T) {
	// Kubernetes paths too: only Responder answers with a Status body.
	for _, tc := range []struct{ path string }{
		{"/"},
		{"/upload"},
		{"/api/v1/namespaces/default/configmaps"},
		{"/apis/apps/v1/namespaces/default/deployments?dryRun=All"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			var logged bytes.Buffer
			cfg := transport.DefaultConfig()
			cfg.RetryAfter = 5 * time.Second
			cfg.ErrorLog = log.New(&logged, "", 0)
			tr := transport.New(nil, cfg)
			req := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader("x"))

			rec := httptest.NewRecorder()
			tr.ErrorHandler(rec, req, fmt.Errorf("round trip %s: %w", "10.96.0.1:6443", teebody.ErrNotReplayable))
			checkNoLeak(t, rec.Result(), rec.Body.String())
			if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "5" {
				t.Errorf("not replayable: status %d, Retry-After %q; want 429, 5", rec.Code, rec.Header().Get("Retry-After"))
			}
			checkPlainRetryLater(t, rec.Result(), rec.Body.String(), 5)
			if logged.Len() != 0 {
				t.Errorf("a 429 was logged: %q", logged.String())
			}

			rec = httptest.NewRecorder()
			tr.ErrorHandler(rec, req, errUpstream)
			checkNoLeak(t, rec.Result(), rec.Body.String())
			if rec.Code != http.StatusBadGateway {
				t.Errorf("other error: status %d, want 502", rec.Code)
			}
			if rec.Body.Len() != 0 || len(rec.Header()) != 0 {
				t.Errorf("502: header %v, body %q; want neither, as ReverseProxy answers", rec.Header(), rec.Body.String())
			}
			if want := "http: proxy error: " + errUpstream.Error() + "\n"; logged.String() != want {
				t.Errorf("logged %q, want %q", logged.String(), want)
			}
			if st := tr.Stats(); st.RetryLaterWritten != 1 || st.BadGatewayWritten != 1 {
				t.Errorf("RetryLaterWritten, BadGatewayWritten = %d, %d after a 429 and a 502, want 1, 1", st.RetryLaterWritten, st.BadGatewayWritten)
			}
		})
	}
}

// TestResponderAlwaysStatus: Responder answers every request with a Status
// body, whatever its path, and never with the error's text.
func TestResponderAlwaysStatus(t *testing.T) {
	cfg := transport.DefaultConfig()
	cfg.ErrorLog = log.New(io.Discard, "", 0)
	tr := transport.New(nil, cfg)
	for _, path := range []string{"/upload", "/api/v1/pods"} {
		req := httptest.NewRequest(http.MethodPost, path, nil)
		rec := httptest.NewRecorder()
		tr.Responder().Error(rec, req, fmt.Errorf("upstream 10.96.0.1:6443: %w", teebody.ErrNotReplayable))
		checkNoLeak(t, rec.Result(), rec.Body.String())
		checkStatusBody(t, rec.Body.Bytes(), 1)

		rec = httptest.NewRecorder()
		tr.Responder().Error(rec, req, errUpstream)
		checkNoLeak(t, rec.Result(), rec.Body.String())
		if rec.Code != http.StatusBadGateway {
			t.Errorf("%s: status %d, want 502", path, rec.Code)
		}
		checkBadGatewayStatus(t, rec.Result(), rec.Body.Bytes())
	}
}

// TestErrorHandlerDeadUpstream: a real ReverseProxy in front of a loopback
// address where nothing listens. Its 502 carries neither the address nor the
// dial error: an empty body from ErrorHandler, a Status from Responder.
// Config.ErrorLog gets the error.
func TestErrorHandlerDeadUpstream(t *testing.T) {
	dead := proxytest.DeadAddr(t)
	target := &url.URL{Scheme: "http", Host: dead}

	logged := &logCounter{}
	cfg := quietConfig()
	cfg.ErrorLog = log.New(logged, "", 0)
	inner := &http.Transport{}
	t.Cleanup(inner.CloseIdleConnections)
	tr := transport.New(inner, cfg)

	for i, status := range []bool{false, true} {
		front := proxyFront(t, target, tr, answerer(tr, status))
		resp, body := front.post(t, "/api/v1/namespaces/default/configmaps", `{"kind":"ConfigMap"}`)
		if resp.StatusCode != http.StatusBadGateway {
			t.Errorf("Status body %v: %s, want 502", status, resp.Status)
		}
		for _, leak := range []string{dead, "dial", "refused"} {
			if bytes.Contains(body, []byte(leak)) {
				t.Errorf("Status body %v: the body %q holds %q", status, body, leak)
			}
		}
		checkNoLeak(t, resp, string(body))
		if status {
			checkBadGatewayStatus(t, resp, body)
		} else if len(body) != 0 {
			t.Errorf("ErrorHandler: body %q, want none", body)
		}
		if n := logged.count("http: proxy error: dial tcp " + dead); n != i+1 {
			t.Errorf("after %d POSTs the error log holds %d dial errors naming %s: %q", i+1, n, dead, logged.lines)
		}
	}
	drain(t, tr)
}

// answerer returns tr's Responder().Error if status, else tr.ErrorHandler.
func answerer(tr *transport.Transport, status bool) func(http.ResponseWriter, *http.Request, error) {
	if status {
		return tr.Responder().Error
	}
	return tr.ErrorHandler
}

// TestErrorHandlerRefusedPlain: when the upstream refuses a body that cannot
// be sent again, ErrorHandler answers a plain 429 with Retry-After, even for
// a Kubernetes API path, and Responder a Status.
func TestErrorHandlerRefusedPlain(t *testing.T) {
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), proxytest.Options{RefuseEvery: 1})
	cfg := transport.Config{Disabled: true, RetryAfter: 3 * time.Second} // no body can be sent again
	tr := transport.New(transportTo(t, up), cfg)
	target, err := url.Parse(up.URL)
	if err != nil {
		t.Fatal(err)
	}

	for _, status := range []bool{false, true} {
		front := proxyFront(t, target, tr, answerer(tr, status))
		resp, body := front.post(t, "/apis/apps/v1/namespaces/default/deployments", strings.Repeat("x", 4<<10))
		checkNoLeak(t, resp, string(body))
		if status {
			checkStatusBody(t, body, 3)
		} else {
			checkPlainRetryLater(t, resp, string(body), 3)
		}
	}
	if got := up.Goaways(); got < 2 {
		t.Errorf("the upstream refused %d connections, want one per request", got)
	}
	if st := tr.Stats(); st.RetryLaterWritten != 2 || st.BadGatewayWritten != 0 {
		t.Errorf("RetryLaterWritten, BadGatewayWritten = %d, %d; want 2, 0", st.RetryLaterWritten, st.BadGatewayWritten)
	}
}

// checkPlainRetryLater checks a 429 outside the Kubernetes API: Retry-After
// of secs, a one-line text body that says when to try again.
func checkPlainRetryLater(t *testing.T, resp *http.Response, body string, secs int) {
	t.Helper()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != strconv.Itoa(secs) {
		t.Errorf("status %d, Retry-After %q; want 429, %d", resp.StatusCode, resp.Header.Get("Retry-After"), secs)
	}
	for k, want := range map[string]string{
		"Content-Type":           "text/plain; charset=utf-8",
		"X-Content-Type-Options": "nosniff",
		"Content-Length":         strconv.Itoa(len(body)),
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s %q, want %q", k, got, want)
		}
	}
	want := fmt.Sprintf("the request body could not be replayed after the upstream closed its connection; please try again in %ds\n", secs)
	if body != want {
		t.Errorf("body %q, want %q", body, want)
	}
}

// checkBadGatewayStatus checks a 502's Status body: JSON, no Retry-After,
// and a fixed message.
func checkBadGatewayStatus(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	if got := resp.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q, want application/json", got)
	}
	if got := resp.Header.Get("Retry-After"); got != "" {
		t.Errorf("Retry-After %q, want none", got)
	}
	if msg := checkStatus(t, body, http.StatusBadGateway, nil); msg != "proxy error; see the proxy's log" {
		t.Errorf("message %q, want \"proxy error; see the proxy's log\"", msg)
	}
}

// checkNoLeak checks that no header and no body of an answer holds the text
// of the errors these tests hand to ErrorHandler.
func checkNoLeak(t *testing.T, resp *http.Response, body string) {
	t.Helper()
	for _, leak := range []string{"10.96.0.1", "6443", "dial", "teebody:", "connection refused", "GetBody", "GOAWAY"} {
		if strings.Contains(body, leak) {
			t.Errorf("the body %q holds %q", body, leak)
		}
		for k, vs := range resp.Header {
			for _, v := range vs {
				if strings.Contains(v, leak) {
					t.Errorf("header %s: %q holds %q", k, v, leak)
				}
			}
		}
	}
}

// proxyClient is a ReverseProxy served on loopback, and a client for it.
type proxyClient struct {
	url    string
	client *http.Client
}

// proxyFront serves a ReverseProxy to target over tr, whose errors handle
// answers.
func proxyFront(t *testing.T, target *url.URL, tr http.RoundTripper, handle func(http.ResponseWriter, *http.Request, error)) proxyClient {
	srv := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:      func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:    tr,
		ErrorHandler: handle,
		ErrorLog:     proxytest.QuietLog(),
	})
	t.Cleanup(srv.Close)
	client := srv.Client()
	t.Cleanup(client.CloseIdleConnections)
	return proxyClient{srv.URL, client}
}

// post sends body to path, as a body that cannot be sent again, and
// returns the response with its body read.
func (f proxyClient) post(t *testing.T, path, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := f.client.Post(f.url+path, "application/octet-stream", io.MultiReader(strings.NewReader(body)))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("POST %s: read the body: %v", path, err)
	}
	return resp, b
}
