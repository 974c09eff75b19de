package proxy

import (
	"encoding/json"
	"log/slog"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// badGateway is the -no-fix ErrorHandler: it logs the error and answers 502
// with a Kubernetes Status whose message carries the error, as a proxy
// without the fix would (the kube-aggregator answers "error trying to reach
// service: " and the error), so that a client sees why (the GOAWAY) in its
// error text and the load run can count it. The transport's own
// ErrorHandler writes no error text.
func badGateway(logger *slog.Logger) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		logger.Warn("proxy error", "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusBadGateway)
		_ = json.NewEncoder(w).Encode(metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   metav1.StatusFailure,
			Message:  "proxy error: " + err.Error(),
			Code:     http.StatusBadGateway,
		})
	}
}
