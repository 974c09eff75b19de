package transport_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/teebody/teebody/pkg/transport"
)

// statusWriter remembers the status code written through it.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the writer's Flush.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// An access log of what the Transport did with each body: the handler puts a
// Report in the request's context before the proxy runs, and reads it after.
// Here the upstream's first connection refuses the request with a graceful
// GOAWAY, so the body is sent twice.
func ExampleWithReport() {
	upstream := newRefusingUpstream()
	defer upstream.Close()
	target, _ := url.Parse(upstream.URL)

	tr := transport.New(upstream.Transport(), transport.DefaultConfig())
	defer tr.CloseIdleConnections()
	proxy := &httputil.ReverseProxy{
		Rewrite:      func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:    tr,
		ErrorHandler: tr.ErrorHandler,
	}
	accessLog := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var report transport.Report
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		proxy.ServeHTTP(sw, r.WithContext(transport.WithReport(r.Context(), &report)))
		refused := "-"
		if report.Refused != 0 {
			refused = report.Refused.String()
		}
		fmt.Printf("%s %s %d attempts=%d refused=%s\n", r.Method, r.URL.Path, sw.code, report.Attempts, refused)
	})

	body := strings.Repeat("x", 100<<10) // 100 KiB
	accessLog.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)))
	// Output:
	// POST / 200 attempts=2 refused=-
}
