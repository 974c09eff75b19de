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
// the one the transport reads. So a follower copies the caller's map into
// the transport's in its Read that returns io.EOF, where the source's own
// Read would have updated it. The transport reads the final values after
// that Read, as it would without a Tee.
//
// Only the newest follower copies. An attempt's headers go out after
// GetBody has returned its follower, and a follower it replaced may still
// be read by a write that outlived its attempt (quic-go's does), so a copy
// by an older follower could meet a newer attempt's headers. mu orders each
// copy before or after the hand-over of a newer follower.
type trailer struct {
	src http.Header // the caller's map, which the source updates in the filler
	out http.Header // the inner RoundTripper's map

	mu     sync.Mutex
	newest *trailerBody // the follower handed out last; guarded by mu
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

// body returns follower, as the newest, which publishes the trailer at its
// io.EOF.
func (t *trailer) body(follower io.ReadCloser) io.ReadCloser {
	b := &trailerBody{ReadCloser: follower, trailer: t}
	t.mu.Lock()
	t.newest = b
	t.mu.Unlock()
	return b
}

// publish makes the inner RoundTripper's map what the source left in the
// caller's, if b is the newest follower. A follower's io.EOF comes after
// the filler's, so the source is done with src.
func (t *trailer) publish(b *trailerBody) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if b != t.newest {
		return
	}
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
		b.trailer.publish(b)
	}
	return n, err
}
