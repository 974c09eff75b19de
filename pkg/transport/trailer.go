package transport

import (
	"errors"
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
// sends the headers, for the keys, and again after the body's end, for the
// values (net/http's HTTP/1 and HTTP/2 transports, quic-go's). Without a
// Tee, that Read runs in the goroutine that sends the body, so the two
// never meet. With one, the filler reads the source in a goroutine of its
// own, while a replay's headers may be going out: the map the source
// updates cannot be the one the transport reads. So a follower copies the
// caller's map into the transport's in its Read that returns io.EOF, where
// the source's own Read would have updated it. The transport reads the
// final values after that Read, as it would without a Tee.
//
// Every attempt reads that one map: a retry, send's or the inner
// transport's own, is a shallow copy of the request. So the copy is made
// once, and never while an attempt may read the map. Only the newest
// follower makes it. An attempt's headers go out after GetBody has returned
// its follower, so a copy by an older one could meet a newer attempt's
// headers; a transport retries an attempt only once it has failed, so an
// older attempt's headers are out by then. A follower that GetBody replaced
// may still be read by a write that outlived its attempt (quic-go's does).
// If it reached its end before the copy, an io.EOF would let that write
// read the map while the newest follower's end fills it: such a Read fails
// with errReplacedEnd instead, and a body that fails sends no trailer. Its
// attempt is over anyway. Any follower that reaches its end after the copy
// returns io.EOF, and its attempt sends the final values. mu orders the
// copy after the hand-over of the newest follower and before every Read
// that returns io.EOF.
type trailer struct {
	src http.Header // the caller's map, which the source updates in the filler
	out http.Header // the inner RoundTripper's map; written only by the copy

	mu        sync.Mutex
	newest    *trailerBody // the follower handed out last; guarded by mu
	published bool         // out holds the copy; guarded by mu
}

// errReplacedEnd fails the end of a follower that GetBody replaced, when
// the newest follower has not yet published the trailer.
var errReplacedEnd = errors.New("transport: a request body replaced by GetBody ended before the newest one; its trailer cannot be sent")

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
// caller's, once, if b is the newest follower. It reports whether the map
// holds those values, now or from an earlier call; b's attempt may read
// them only then. A follower's io.EOF comes after the filler's, so the
// source is done with src.
func (t *trailer) publish(b *trailerBody) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.published {
		return true
	}
	if b != t.newest {
		return false
	}
	clear(t.out)
	for k, vv := range t.src {
		t.out[k] = append([]string(nil), vv...)
	}
	t.published = true
	return true
}

// trailerBody is a follower that publishes its trailer at io.EOF. Its Read
// returns errReplacedEnd in place of io.EOF while a newer follower has yet
// to publish.
type trailerBody struct {
	io.ReadCloser
	trailer *trailer
}

func (b *trailerBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.trailer.publish(b) {
		err = errReplacedEnd
	}
	return n, err
}
