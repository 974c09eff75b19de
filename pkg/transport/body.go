package transport

import (
	"io"
	"sync"
)

// responseBody wraps a response body so that its first Close also ends the
// request (closes the Tee). Close may come from any goroutine, concurrently
// with Read, and more than once: only the first one ends the request.
type responseBody struct {
	io.ReadCloser
	once sync.Once
	end  func() // called once, after the first Close of the inner body
}

func (b *responseBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.end)
	return err
}

// writableResponseBody keeps the io.Writer of a body that has one (the body
// of a 101 Switching Protocols response is an io.ReadWriteCloser, and
// httputil.ReverseProxy requires it). Upgrade requests pass through
// untouched, so this only matters for one the headers did not announce.
type writableResponseBody struct {
	*responseBody
	w io.Writer
}

func (b writableResponseBody) Write(p []byte) (int, error) { return b.w.Write(p) }

func newResponseBody(rc io.ReadCloser, end func()) io.ReadCloser {
	b := &responseBody{ReadCloser: rc, end: end}
	if w, ok := rc.(io.Writer); ok {
		return writableResponseBody{b, w}
	}
	return b
}
