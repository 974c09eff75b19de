package transport

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"

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

// endAfterUpload ends the request of an empty response, whose Tee is
// sealed, once the inner transport is done with the body (the newest
// follower returned an error, io.EOF included, or was closed), or once ctx,
// the request's context, is done, whichever comes first: at once if the
// body was sent whole before the response came, as it usually is.
func (t *Transport) endAfterUpload(tee *teebody.Tee, ctx context.Context) {
	u := &upload{t: t, tee: tee}
	if !tee.AfterStreamed(u.streamed) {
		t.end(tee)
		return
	}
	stop := context.AfterFunc(ctx, u.end)
	u.mu.Lock()
	if u.fired {
		u.mu.Unlock()
		stop()
		return
	}
	u.stop = stop
	u.mu.Unlock()
}

// upload is the end of a request whose empty response has come while its
// body may still be streaming: it runs Transport.end once, from whichever
// of the Tee's AfterStreamed function and the context's AfterFunc comes
// first.
type upload struct {
	t     *Transport
	tee   *teebody.Tee
	ended atomic.Bool // end has run Transport.end

	mu    sync.Mutex
	fired bool        // guarded by mu: streamed has run
	stop  func() bool // guarded by mu: stops the context's AfterFunc; nil until endAfterUpload set it
}

// streamed runs when the inner transport is done with the body.
func (u *upload) streamed() {
	u.mu.Lock()
	u.fired = true
	stop := u.stop
	u.mu.Unlock()
	if stop != nil {
		stop() // the context's AfterFunc is no longer needed
	}
	u.end()
}

// end ends the request, the first time it is called.
func (u *upload) end() {
	if u.ended.CompareAndSwap(false, true) {
		u.t.end(u.tee)
	}
}
