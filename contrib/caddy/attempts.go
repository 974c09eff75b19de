package teebodycaddy

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// bodyVar is the Caddy request variable under which RoundTrip keeps what the
// attempts of one request did with its body (a *bodyState).
const bodyVar = "teebody.body"

// bodyState is what the attempts of one Caddy request did with its body.
// Caddy's reverse_proxy makes its attempts one after the other, on the
// handler's goroutine, all with the same body: the first that reads from it
// consumes it, and the ones after it must not read the rest as if it were
// the whole (the upstream would get a truncated body).
type bodyState struct {
	src io.ReadCloser // the body Caddy hands every attempt

	// srcMu is held across each Read and the Close of src. Caddy's wrapper
	// of the body (reverseproxy.bodyNopCloserIfNotRead) counts the bytes
	// read in a field that its Close reads, without a lock, so a Close
	// concurrent with a Read is a data race. A Close thus waits for a Read in
	// progress. It runs on the Tee's own closing goroutine, and the server
	// ends that Read once the handler returns, so nothing else waits.
	srcMu sync.Mutex

	// started is set, under the mutex of the attempt that reads, before
	// the first Read of src. Once the last attempt is finished it changes
	// no more.
	started atomic.Bool

	// Owned by the handler's goroutine:
	last    *attemptBody // the latest attempt's body
	failure error        // the error of the attempt that read src; nil if it got a response
}

// bodyOf returns the state of req's body, kept in Caddy's request
// variables, or a new one if req carries another body than the state's (or
// is not a Caddy request, which has no variables: then each attempt is on
// its own).
func bodyOf(req *http.Request) *bodyState {
	st, _ := caddyhttp.GetVar(req.Context(), bodyVar).(*bodyState)
	if st == nil || st.src != req.Body {
		st = &bodyState{src: req.Body}
		caddyhttp.SetVar(req.Context(), bodyVar, st)
	}
	return st
}

// next finishes the previous attempt and returns the body for a new one, or
// false if an earlier attempt has read from src. Called on the handler's
// goroutine.
func (st *bodyState) next() (*attemptBody, bool) {
	if st.last != nil {
		st.last.finish()
	}
	if st.started.Load() {
		return nil, false
	}
	st.last = &attemptBody{st: st}
	return st.last, true
}

// errAttemptOver is what an attempt's body returns to a Read after its
// attempt is over; the library's transport never reads that late (its
// RoundTrip has returned), so nobody sees it.
var errAttemptOver = errors.New("teebody: read after the attempt ended")

// attemptBody is one attempt's view of the body, the source of that
// attempt's teebody.Tee. It reads src, and closes it only if it read from it:
// an attempt that never read (a dial error) leaves src whole for the next
// one, as Caddy's own wrapper does. Read and Close are safe for concurrent
// use with each other and with finish.
type attemptBody struct {
	st *bodyState

	mu   sync.Mutex
	read bool // guarded by mu: a Read of src began
	over bool // guarded by mu: finish was called; src is not read again
}

func (b *attemptBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.over {
		b.mu.Unlock()
		return 0, errAttemptOver
	}
	b.read = true
	b.st.started.Store(true)
	b.mu.Unlock()
	b.st.srcMu.Lock()
	defer b.st.srcMu.Unlock()
	return b.st.src.Read(p)
}

// Close closes src if this attempt read from it, once no Read of src is in
// progress (see bodyState.srcMu).
func (b *attemptBody) Close() error {
	b.mu.Lock()
	read := b.read
	b.mu.Unlock()
	if !read {
		return nil
	}
	b.st.srcMu.Lock()
	defer b.st.srcMu.Unlock()
	return b.st.src.Close()
}

// finish ends the attempt: a Read that has not begun by then fails, so that
// bodyState.started is final.
func (b *attemptBody) finish() {
	b.mu.Lock()
	b.over = true
	b.mu.Unlock()
}
