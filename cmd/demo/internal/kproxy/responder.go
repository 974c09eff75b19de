package kproxy

import (
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/teebody/teebody/cmd/demo/internal/kstatus"
	"github.com/teebody/teebody/pkg/transport"
)

// Responder is an apimachinery proxy.ErrorResponder. With RetryLater set it
// answers an error for which transport.ShouldRetryLater holds (the upstream
// never processed the request, and its body could not be replayed) with
// transport.WriteRetryLater: 429 and Retry-After, which client-go retries.
// Every other error, and every error without RetryLater, gets 502 with a
// Kubernetes Status carrying the error's text, as Kubernetes proxies
// answer. It is safe for concurrent use.
type Responder struct {
	RetryLater bool
	RetryAfter time.Duration // <= 0: transport.DefaultRetryAfter
	Logger     *slog.Logger  // nil: no log

	retryLater, badGateway atomic.Int64
}

// Error implements proxy.ErrorResponder.
func (rs *Responder) Error(w http.ResponseWriter, r *http.Request, err error) {
	if rs.RetryLater && transport.ShouldRetryLater(err) {
		rs.retryLater.Add(1)
		transport.WriteRetryLater(w, rs.RetryAfter)
		return
	}
	rs.badGateway.Add(1)
	if rs.Logger != nil {
		rs.Logger.Warn("proxy error", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	kstatus.Write(w, metav1.Status{
		Code:    http.StatusBadGateway,
		Reason:  metav1.StatusReasonUnknown,
		Message: "proxy error: " + err.Error(),
	})
}

// Counts returns how many answers were 429 and how many 502 so far.
func (rs *Responder) Counts() (retryLater, badGateway int64) {
	return rs.retryLater.Load(), rs.badGateway.Load()
}
