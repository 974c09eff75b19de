package transport

import (
	"io"
	"net/http"
	"sync"
)

// trailer gives the inner RoundTripper a Trailer map of its own, for a
// request that has one.
//
// A body may update its request's Trailer map until its Read returns io.EOF
// (http.Request.Trailer); net/http's server bodies do, and so do proxies
// that pass their inbound trailers on. A transport reads the map when it
// sends the headers, and again after the body's end. Without a Tee, that
// Read runs in the goroutine that sends the body, so the two never meet.
// With one, the filler reads the source in a goroutine of its own, while a
// replay's headers may be going out: the map the source updates cannot be
// the one the transport reads. So each follower copies the caller's map
// into the transport's in its Read that returns io.EOF, where the source's
// own Read would have updated it, and the transport reads the final values
// after that Read, as it would without a Tee. It relies on the inner
// RoundTripper sending one attempt at a time, as Go's transports do.
type trailer struct {
	src  http.Header // the caller's map, which the source updates in the filler
	out  http.Header // the inner RoundTripper's map
	once sync.Once   // the copy at the first follower's io.EOF
}

// withTrailer makes out, a buffered request, carry t: its Trailer, and
// followers that publish it.
func withTrailer(out *http.Request, t *trailer) {
	out.Trailer = t.out
	out.Body = t.body(out.Body)
	getBody := out.GetBody
	out.GetBody = func() (io.ReadCloser, error) {
		body, err := getBody()
		if err != nil {
			return nil, err
		}
		return t.body(body), nil
	}
}

// newTrailer returns a trailer for src, before the Tee's filler starts.
func newTrailer(src http.Header) *trailer {
	return &trailer{src: src, out: src.Clone()}
}

// body returns follower, which publishes the trailer at its io.EOF.
func (t *trailer) body(follower io.ReadCloser) io.ReadCloser {
	return &trailerBody{ReadCloser: follower, trailer: t}
}

// publish makes the inner RoundTripper's map what the source left in the
// caller's. The follower's io.EOF comes after the filler's, so the source
// is done with src.
func (t *trailer) publish() {
	clear(t.out)
	for k, vv := range t.src {
		t.out[k] = append([]string(nil), vv...)
	}
}

// trailerBody is a follower that publishes its trailer at io.EOF.
type trailerBody struct {
	io.ReadCloser
	trailer *trailer
}

func (b *trailerBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.trailer.once.Do(b.trailer.publish)
	}
	return n, err
}
