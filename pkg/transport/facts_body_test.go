package transport_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

// watchedBody is a request body fed by a pipe that no one writes to: every
// Read blocks until Close. It signals reading when its first Read starts and
// records whether Close came while a Read was pending.
type watchedBody struct {
	pr      *io.PipeReader
	reading chan struct{} // closed when the first Read starts
	once    atomic.Bool
	pending atomic.Int64 // Reads in progress
	closed  atomic.Bool
	inRead  atomic.Bool // Close came while a Read was pending
}

func newWatchedBody() *watchedBody {
	pr, _ := io.Pipe()
	return &watchedBody{pr: pr, reading: make(chan struct{})}
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.pending.Add(1)
	defer b.pending.Add(-1)
	if b.once.CompareAndSwap(false, true) {
		close(b.reading)
	}
	return b.pr.Read(p)
}

func (b *watchedBody) Close() error {
	b.inRead.Store(b.pending.Load() > 0)
	b.closed.Store(true)
	return b.pr.Close()
}

// Facts 3 and 4: an upstream that answers before reading the body makes
// RoundTrip return while the transport still reads the request body.
// Closing the response body makes the transport close the request body
// while its Read is pending (so on another goroutine), and returns only
// once that Close returned.
func TestFactRequestBodyClosedAfterRoundTrip(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		w.(http.Flusher).Flush()
		_, _ = io.Copy(io.Discard, r.Body)
	}), proxytest.Options{})
	body := newWatchedBody()
	req, err := http.NewRequest(http.MethodPost, srv.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := transportTo(t, srv).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	<-body.reading
	if body.closed.Load() {
		t.Fatal("the request body was closed before the response body")
	}
	resp.Body.Close()
	if !body.closed.Load() {
		t.Fatal("resp.Body.Close returned before the request body was closed")
	}
	if !body.inRead.Load() {
		t.Error("the request body was closed with no Read pending")
	}
}

// Fact 4: net/http gives an empty HTTP/1 response http.NoBody, whose Close
// does nothing, so closing it cannot tell anyone that the request is over.
func TestFactEmptyResponseIsNoBody(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}), proxytest.Options{HTTP1: true})
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := transportTo(t, srv).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Body != http.NoBody {
		t.Errorf("the body of a 204 is %T, want http.NoBody", resp.Body)
	}
}

// Fact 7: net/http's HTTP/1 server closes a request body once its handler
// has returned; a later Read fails. (The server handles the next request
// on a connection only after it finished the previous one, so by then the
// first body is closed.)
func TestFactServerBodyClosedAfterHandler(t *testing.T) {
	stash := make(chan io.Reader, 1)
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			stash <- r.Body
		}
	}), proxytest.Options{HTTP1: true})
	tr := transportTo(t, srv)
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		req, err := http.NewRequest(method, srv.URL, strings.NewReader("unread"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if n, err := (<-stash).Read(make([]byte, 16)); err == nil || !strings.Contains(err.Error(), "invalid Read on closed Body") {
		t.Errorf("Read after the handler returned: %d bytes, %v; want net/http's invalid Read error", n, err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
