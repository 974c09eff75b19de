package proxy

import (
	"log/slog"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"

	"github.com/teebody/teebody/cmd/demo/internal/serve"
)

// badGateway is the -no-fix ErrorHandler: 502 with a Kubernetes Status that
// carries the transport's error, as Kubernetes proxies answer, so that a
// client sees why (the GOAWAY) in its error text.
func badGateway(logger *slog.Logger) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		logger.Warn("proxy error", "method", r.Method, "path", r.URL.Path, "err", err)
		responsewriters.RespondWithError(w, r, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    http.StatusBadGateway,
			Reason:  metav1.StatusReasonUnknown,
			Message: "proxy error: " + err.Error(),
		}}, serve.Codecs)
	}
}
