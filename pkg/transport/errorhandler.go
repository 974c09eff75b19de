package transport

import (
	"encoding/json"
	"errors"
	"log"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/teebody/teebody/pkg/teebody"
)

// The text of the errors that Go's transports (and ReverseProxy's body
// wrapper) return, as plain strings, when a request that the upstream never
// processed cannot be sent again because its body cannot be rewound
// (docs/design.md, facts 1, 5 and 6). None can be matched with errors.Is, so
// ShouldRetryLater falls back to their text: they reach it when a caller sets
// no GetBody (the request passed through) or uses an inner RoundTripper of
// its own.
const (
	// golang.org/x/net/http2 and net/http's bundled copy:
	// "http2: Transport: cannot retry err [%v] after Request.Body was
	// written; define Request.GetBody to avoid this error". The HTTP/2
	// transport only produces it for errors that mean the stream was not
	// processed (a graceful GOAWAY, a refused stream, an unusable conn).
	errTextCannotRetry = "after Request.Body was written; define Request.GetBody to avoid this error"
	// net/http: "net/http: cannot rewind body after connection loss",
	// returned only when the transport had decided the request was safe
	// to send again.
	errTextCannotRewind = "cannot rewind body after connection loss"
	// net/http/httputil: "ReverseProxy does an invalid Read on closed
	// Body". Without GetBody, the HTTP/2 transport resends a refused
	// request whose body it had not started to write with the same body,
	// which its first attempt had already closed; ReverseProxy's wrapper
	// then refuses the Read. Seen through the demo's unfixed proxy on Go
	// 1.26; Go 1.27's ReverseProxy has no such wrapper.
	errTextClosedProxyBody = "ReverseProxy does an invalid Read on closed Body"
)

// errTextClosedServerBody is the same failure where nothing wraps the
// inbound body: Go 1.27's ReverseProxy, and hand-written proxies, hand their
// transport the HTTP/1 server's body itself, which the first attempt closed,
// so the resend reads "http: invalid Read on closed Body"
// (http.ErrBodyReadAfterClose). A proxy's ErrorHandler only sees it while
// its handler runs, when only the transport closes the inbound body.
var errTextClosedServerBody = http.ErrBodyReadAfterClose.Error()

// errTextNotReplayable is the text that begins every error matching
// teebody.ErrNotReplayable. Some proxies flatten the transport's error into
// a string of their own: apimachinery's proxy transport (UpgradeAwareHandler
// with wrapTransport true, as the kube-aggregator wires it) answers
// "error trying to reach service: teebody: body is not replayable: ...", on
// which errors.Is no longer works.
var errTextNotReplayable = teebody.ErrNotReplayable.Error()

// ShouldRetryLater reports whether err says that the upstream did not
// process the request and that the request could not be sent again, its body
// not being replayable. The client may then safely send it later. It knows
// errors matching teebody.ErrNotReplayable and, by their text, the errors
// that Go's transports, httputil.ReverseProxy and net/http's server body
// return in that case, also inside the message of a proxy that flattened
// them. Any other error, nil included, reports false.
func ShouldRetryLater(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, teebody.ErrNotReplayable) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, errTextNotReplayable) ||
		strings.Contains(msg, errTextCannotRetry) ||
		strings.Contains(msg, errTextCannotRewind) ||
		strings.Contains(msg, errTextClosedProxyBody) ||
		strings.Contains(msg, errTextClosedServerBody)
}

// status is the subset of a Kubernetes metav1.Status that WriteRetryLater
// writes, spelled out here so that the library needs no Kubernetes module.
type status struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   struct{}       `json:"metadata"`
	Status     string         `json:"status"`
	Message    string         `json:"message"`
	Reason     string         `json:"reason"`
	Details    *statusDetails `json:"details,omitempty"`
	Code       int            `json:"code"`
}

type statusDetails struct {
	RetryAfterSeconds int64 `json:"retryAfterSeconds,omitempty"`
}

// retryAfterSeconds rounds d up to whole seconds, at least 1, the form of
// the Retry-After header. d <= 0 means DefaultRetryAfter.
func retryAfterSeconds(d time.Duration) int64 {
	if d <= 0 {
		d = DefaultRetryAfter
	}
	return max(1, int64(math.Ceil(d.Seconds())))
}

// WriteRetryLater answers with 429 Too Many Requests, a Retry-After header
// of retryAfter rounded up to whole seconds (at least 1; <= 0 means
// DefaultRetryAfter), and a Kubernetes Status body (reason TooManyRequests,
// details.retryAfterSeconds) — the answer a Kubernetes API server gives
// while it cannot take a request, which client-go and kubectl retry for
// every verb after the delay. It must be called before anything else was
// written to w.
func WriteRetryLater(w http.ResponseWriter, retryAfter time.Duration) {
	secs := retryAfterSeconds(retryAfter)
	body, err := json.Marshal(status{
		Kind:       "Status",
		APIVersion: "v1",
		Status:     "Failure",
		Message: "the request body could not be replayed after the upstream closed its connection; " +
			"please try again in " + strconv.FormatInt(secs, 10) + "s",
		Reason:  "TooManyRequests",
		Details: &statusDetails{RetryAfterSeconds: secs},
		Code:    http.StatusTooManyRequests,
	})
	if err != nil { // a fixed struct of strings and integers always marshals
		panic("transport: marshal Status: " + err.Error())
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Retry-After", strconv.FormatInt(secs, 10))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(body) // an error means the client is gone: nobody left to tell
}

// ErrorHandler answers a request that the inner RoundTripper failed, for use
// as httputil.ReverseProxy.ErrorHandler: when ShouldRetryLater(err), with
// WriteRetryLater and the Config's RetryAfter (counted in
// Stats.RetryLaterWritten); otherwise as ReverseProxy's default does, by
// logging "http: proxy error: err" to Config.ErrorLog and answering 502 Bad
// Gateway. It is safe for concurrent use.
func (t *Transport) ErrorHandler(w http.ResponseWriter, r *http.Request, err error) {
	if ShouldRetryLater(err) {
		t.counters.retryLaterWritten.Add(1)
		WriteRetryLater(w, t.cfg.retryAfter())
		return
	}
	logf := log.Printf
	if t.cfg.ErrorLog != nil {
		logf = t.cfg.ErrorLog.Printf
	}
	logf("http: proxy error: %v", err)
	w.WriteHeader(http.StatusBadGateway)
}
