package transport

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"time"
)

// status is the subset of a Kubernetes metav1.Status that the answers of
// this package carry, spelled out here so that the library needs no
// Kubernetes module. The omitempty tags are metav1.Status's own.
type status struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   struct{}       `json:"metadata"`
	Status     string         `json:"status"`
	Message    string         `json:"message,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Details    *statusDetails `json:"details,omitempty"`
	Code       int            `json:"code,omitempty"`
}

type statusDetails struct {
	RetryAfterSeconds int64 `json:"retryAfterSeconds,omitempty"`
}

// writeStatus answers with a failure Status of the given code, reason,
// message and details as JSON, code being the HTTP status too. Headers
// already set on w (Retry-After) are kept. A failed write to w is ignored:
// it means the client is gone, with nobody left to tell.
func writeStatus(w http.ResponseWriter, code int, reason, message string, details *statusDetails) {
	body, err := json.Marshal(status{
		Kind:       "Status",
		APIVersion: "v1",
		Status:     "Failure",
		Message:    message,
		Reason:     reason,
		Details:    details,
		Code:       code,
	})
	if err != nil { // a fixed struct of strings and integers always marshals
		panic("transport: marshal Status: " + err.Error())
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
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
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	writeStatus(w, http.StatusTooManyRequests, "TooManyRequests",
		"the request body could not be replayed after the upstream closed its connection; "+
			"please try again in "+strconv.FormatInt(secs, 10)+"s",
		&statusDetails{RetryAfterSeconds: secs})
}

// WriteBadGateway answers with 502 Bad Gateway and a Kubernetes Status body
// whose message is "proxy error: " and err's text (reason unset, as
// metav1.StatusReasonUnknown is), as Kubernetes' proxies answer an upstream
// they could not reach: client-go turns it into an error carrying that
// text, and does not retry it. The text may name the upstream's address.
// It must be called before anything else was written to w.
func WriteBadGateway(w http.ResponseWriter, err error) {
	msg := "proxy error"
	if err != nil {
		msg += ": " + err.Error()
	}
	writeStatus(w, http.StatusBadGateway, "", msg, nil)
}
