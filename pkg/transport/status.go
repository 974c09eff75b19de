package transport

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"time"
)

// The answers of ErrorHandler and Responder carry no error text: the error
// may name the upstream's address, and the client has no use for it
// (docs/design.md, "Answers to the client").

// msgBadGateway is the message of the 502's Status body.
const msgBadGateway = "proxy error; see the proxy's log"

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

// writeRetryLater answers 429 Too Many Requests with a Retry-After of d
// (d > 0) rounded up to whole seconds. The body is a Kubernetes Status of
// reason TooManyRequests when asStatus, else one line of plain text.
// client-go and kubectl retry such a 429 for every verb after the delay.
func writeRetryLater(w http.ResponseWriter, d time.Duration, asStatus bool) {
	secs := max(1, int64(math.Ceil(d.Seconds())))
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	msg := "the request body could not be replayed after the upstream closed its connection; " +
		"please try again in " + strconv.FormatInt(secs, 10) + "s"
	if asStatus {
		writeStatus(w, http.StatusTooManyRequests, "TooManyRequests", msg, &statusDetails{RetryAfterSeconds: secs})
		return
	}
	writeBody(w, http.StatusTooManyRequests, "text/plain; charset=utf-8", []byte(msg+"\n"))
}

// writeBadGateway answers 502 Bad Gateway: with a Kubernetes Status whose
// reason is unset (metav1.StatusReasonUnknown) when asStatus, else with an
// empty body, as httputil.ReverseProxy does.
func writeBadGateway(w http.ResponseWriter, asStatus bool) {
	if asStatus {
		writeStatus(w, http.StatusBadGateway, "", msgBadGateway, nil)
		return
	}
	w.WriteHeader(http.StatusBadGateway)
}

// writeStatus answers with a failure Status of the given code, reason,
// message and details as JSON, code being the HTTP status too.
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
	if err != nil { // a struct of strings and integers always marshals
		panic("transport: marshal Status: " + err.Error())
	}
	writeBody(w, code, "application/json", body)
}

// writeBody answers code with body, of the given Content-Type. Headers
// already set on w (Retry-After) are kept. A failed write to w is ignored:
// it means the client is gone, with nobody left to tell.
func writeBody(w http.ResponseWriter, code int, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
