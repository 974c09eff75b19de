package transport

import (
	"context"
	"net/http"
	"sync"

	"github.com/teebody/teebody/pkg/teebody"
)

// isEmpty reports whether resp has no body to read: a nil Body (a broken
// RoundTripper's), http.NoBody, a Content-Length of 0, or a response that
// never has one (to HEAD, 204, 304). Over HTTP/2 such a response may still
// come with a body of its own, open until the upstream ends its stream.
func isEmpty(req *http.Request, resp *http.Response) bool {
	return resp.Body == nil || resp.Body == http.NoBody || resp.ContentLength == 0 ||
		req.Method == http.MethodHead ||
		resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified
}

// endAfterUpload ends the request of an empty response, whose Tee is sealed,
// once: when the inner transport is done with the body (the newest follower
// returned an error or was closed) or when ctx is done, whichever is first.
func (t *Transport) endAfterUpload(tee *teebody.Tee, ctx context.Context) {
	end := sync.OnceFunc(func() { t.end(tee) })
	if !tee.AfterStreamed(end) {
		end() // the usual case: the body was sent whole before the response came
		return
	}
	// The upload goes on. The second AfterStreamed also stops ctx's function;
	// if it comes after the upload ended, end ran or runs; after Close, now.
	stop := context.AfterFunc(ctx, end)
	if !tee.AfterStreamed(func() { stop(); end() }) {
		stop()
		end()
	}
}
