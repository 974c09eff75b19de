package proxy

import (
	"log/slog"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/teebody/teebody/cmd/demo/internal/kstatus"
)

// statusErrorHandler is the -no-fix ErrorHandler: 502 with a Kubernetes
// Status that carries the transport's error, as Kubernetes proxies answer,
// so that a client sees why (the GOAWAY) in its error text.
func statusErrorHandler(logger *slog.Logger) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		logger.Warn("proxy error", "method", r.Method, "path", r.URL.Path, "err", err)
		kstatus.Write(w, metav1.Status{
			Code:    http.StatusBadGateway,
			Reason:  metav1.StatusReasonUnknown,
			Message: "proxy error: " + err.Error(),
		})
	}
}
