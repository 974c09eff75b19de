package transport_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

// Fact 6 differs between Go 1.26 and Go 1.27: facts_reverseproxy_go126_test.go
// and facts_reverseproxy_go127_test.go pin each.

// inboundBody is a server-side body that records its Close.
type inboundBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *inboundBody) Close() error {
	b.closed.Store(true)
	return nil
}

// reverseProxyBodies serves one POST through httputil.ReverseProxy and
// returns the inbound body and the body its Transport was handed, once
// ServeHTTP returned.
func reverseProxyBodies(t *testing.T) (in *inboundBody, out io.ReadCloser) {
	t.Helper()
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(&url.URL{Scheme: "http", Host: "upstream.invalid"}) },
		Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			out = req.Body
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
		}),
		ErrorLog: proxytest.QuietLog(),
	}
	in = &inboundBody{Reader: bytes.NewReader([]byte("the body"))}
	rp.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", in))
	if out == nil {
		t.Fatal("the transport got no body")
	}
	return in, out
}
