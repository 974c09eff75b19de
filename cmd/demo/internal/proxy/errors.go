package proxy

import (
	"log/slog"
	"net/http"

	"github.com/teebody/teebody/pkg/transport"
)

// badGateway is the -no-fix ErrorHandler: it logs the error and answers as
// the transport's ErrorHandler answers an error it cannot help with
// (transport.WriteBadGateway: 502 with a Kubernetes Status that carries the
// error), so that a client sees why (the GOAWAY) in its error text.
func badGateway(logger *slog.Logger) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		logger.Warn("proxy error", "method", r.Method, "path", r.URL.Path, "err", err)
		transport.WriteBadGateway(w, err)
	}
}
