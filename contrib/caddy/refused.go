package teebodycaddy

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/teebody/teebody/pkg/transport"
)

// RetryAfterPlaceholder is the placeholder that holds, with on_refused
// error, the Retry-After of a refused request in whole seconds, for a
// handle_errors route: header Retry-After {teebody.retry_after}.
const RetryAfterPlaceholder = "teebody.retry_after"

// refused answers the error err of an attempt of req: if the upstream
// refused the request and its body could not be sent again
// (transport.ShouldRetryLater), with a 429 as OnRefused says; else err
// itself, for Caddy to answer.
func (t *Transport) refused(req *http.Request, err error) (*http.Response, error) {
	if !transport.ShouldRetryLater(err) {
		return nil, err
	}
	var a answer
	if t.answer != nil {
		t.answer(&a, req, err) // 429 and Retry-After; counted in Stats
		return a.response(req), nil
	}
	t.tr.ErrorHandler(&a, req, err) // for its Retry-After; counted in Stats
	if repl, ok := req.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		repl.Set(RetryAfterPlaceholder, a.Header().Get("Retry-After"))
	}
	return nil, caddyhttp.Error(a.code, err)
}

// answer is an http.ResponseWriter that keeps what is written to it, to
// hand it to Caddy as an upstream's response.
type answer struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (a *answer) Header() http.Header {
	if a.header == nil {
		a.header = http.Header{}
	}
	return a.header
}

func (a *answer) WriteHeader(code int) {
	if a.code == 0 {
		a.code = code
	}
}

func (a *answer) Write(p []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	return a.body.Write(p)
}

// response returns what was written as the response to req.
func (a *answer) response(req *http.Request) *http.Response {
	h := a.Header()
	h.Set("Content-Length", strconv.Itoa(a.body.Len()))
	return &http.Response{
		Status:        strconv.Itoa(a.code) + " " + http.StatusText(a.code),
		StatusCode:    a.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(a.body.Bytes())),
		ContentLength: int64(a.body.Len()),
		Request:       req,
	}
}
