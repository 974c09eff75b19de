package http3_test

// The facts of quic-go's HTTP/3 transport that teebody relies on, read in
// github.com/quic-go/quic-go v0.65.0 (http3/transport.go, client.go,
// server.go) and pinned here against its real client and server on
// 127.0.0.1. A quic-go release that changes one fails the test that names
// it.
//
// A graceful Server.Shutdown sends a GOAWAY naming the first stream it did
// not accept, and rejects every stream that arrives later with
// H3_REQUEST_REJECTED. A client that opens a stream before the GOAWAY
// reaches it gets that rejection; one that has the GOAWAY cannot open a
// stream at all. The tests make each case happen on purpose: the client's
// socket holds back what the server sends (gatedConn) until the request's
// headers are out, and the server reports its GOAWAY through a qlog tracer.

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
	"github.com/teebody/teebody/pkg/transport"
)

// The errors quic-go v0.65.0's Transport returns for a request its upstream
// did not process, when it cannot or may not send it again.
const (
	// Refused twice: the second refusal comes back bare.
	factTextRejected = "http3: parsing frame failed: H3_REQUEST_REJECTED"
	// Refused once, without GetBody.
	factTextCannotRetry = "http3: Transport: cannot retry err [http3: parsing frame failed: H3_REQUEST_REJECTED] " +
		"after Request.Body was written; define Request.GetBody to avoid this error"
	// A GOAWAY before the stream, twice.
	factTextGoAway = "http3: conn unusable: connection in graceful shutdown"
)

// What a step of a plan does when the transport has a connection for the
// request (httptrace GotConn), before it opens the request's stream.
const (
	stepPass   = iota // nothing
	stepReject        // the upstream rejects the stream: H3_REQUEST_REJECTED
	stepGoAway        // the client has the GOAWAY before it opens the stream
)

// factRig is one upstream and one client of quic-go's, with a recording
// handler: the bodies it received, intact or not.
type factRig struct {
	t      *testing.T
	up     *upstream
	d      *dialer
	client *http3.Transport

	// releaseAfter, if > 0, lets a held GOAWAY in only when the request's
	// body is read again after it has given releaseAfter bytes, not once its
	// headers are out.
	releaseAfter int64

	mu     sync.Mutex
	bodies [][]byte
}

func newFactRig(t *testing.T) *factRig {
	r := &factRig{t: t, d: &dialer{}}
	r.up = newUpstream(t, http.HandlerFunc(r.serve), true)
	r.client = newClient(t, r.d)
	return r
}

func (r *factRig) serve(w http.ResponseWriter, req *http.Request) {
	b, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, "short body", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, b)
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// received returns the bodies the handler has read so far.
func (r *factRig) received() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.bodies...)
}

// factBody is a request body that counts its Reads and Closes. If release
// is set, a Read calls it once, before it reads, when the body has given
// releaseAfter bytes: the reader has handled them by then.
type factBody struct {
	r      io.Reader
	reads  atomic.Int64
	closed atomic.Bool

	release      func()
	releaseAfter int64
	given        int64 // bytes returned so far; only the reader touches it
	releaseOnce  sync.Once
}

func (b *factBody) Read(p []byte) (int, error) {
	b.reads.Add(1)
	if b.release != nil && b.given >= b.releaseAfter {
		b.releaseOnce.Do(b.release)
	}
	n, err := b.r.Read(p)
	b.given += int64(n)
	return n, err
}

func (b *factBody) Close() error {
	b.closed.Store(true)
	return nil
}

// factRequest is one POST of payload, whose Body and GetBody's bodies are
// factBodies, and how many times GetBody was called.
type factRequest struct {
	req      *http.Request
	body     *factBody
	getBodys atomic.Int64
}

// post returns a POST of payload that runs plan, one step per connection
// the transport gets for it; withGetBody sets GetBody.
func (r *factRig) post(payload []byte, withGetBody bool, plan ...int) *factRequest {
	fr := &factRequest{body: &factBody{r: bytes.NewReader(payload)}}
	var step int
	trace := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			s := stepPass
			if step < len(plan) {
				s = plan[step]
			}
			step++
			r.up.waitHanded(info.Conn.LocalAddr())
			switch s {
			case stepReject:
				// Hold back the GOAWAY, so that the stream opens, and
				// let it in once the headers are out (WroteHeaders).
				r.d.gate(info.Conn.LocalAddr()).hold()
				r.up.restart()
				select {
				case <-r.up.goaways:
				case <-time.After(shutdownGrace):
					r.t.Fatal("the upstream sent no GOAWAY")
				}
			case stepGoAway:
				// The old server's Shutdown returns once the client
				// closed the connection, which it does on the GOAWAY.
				<-r.up.restart()
			}
		},
		WroteHeaders: func() {
			if r.releaseAfter == 0 {
				r.d.releaseAll()
			}
		},
	}
	if r.releaseAfter > 0 {
		fr.body.release, fr.body.releaseAfter = r.d.releaseAll, r.releaseAfter
	}
	ctx := httptrace.WithClientTrace(r.t.Context(), trace)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+r.up.addr+"/", fr.body)
	if err != nil {
		r.t.Fatal(err)
	}
	req.ContentLength = int64(len(payload))
	if withGetBody {
		req.GetBody = func() (io.ReadCloser, error) {
			fr.getBodys.Add(1)
			return io.NopCloser(bytes.NewReader(payload)), nil
		}
	}
	fr.req = req
	return fr
}

func (r *factRig) roundTrip(fr *factRequest) (*http.Response, error) {
	resp, err := r.client.RoundTrip(fr.req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

func randomPayload(t testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// warmUp sends one request, so that the client has a connection.
func (r *factRig) warmUp() {
	r.t.Helper()
	if _, err := r.roundTrip(r.post([]byte("warm-up"), false)); err != nil {
		r.t.Fatal(err)
	}
}

// assertRejected checks that err is quic-go's H3_REQUEST_REJECTED, which
// the library's ShouldRetryLater knows.
func assertRejected(t *testing.T, err error) {
	t.Helper()
	h3err, ok := errors.AsType[*http3.Error](err)
	if !ok || h3err.ErrorCode != http3.ErrCodeRequestRejected || !h3err.Remote {
		t.Errorf("errors.As(%v, *http3.Error) = %+v, %v; want the remote H3_REQUEST_REJECTED", err, h3err, ok)
	}
	if !transport.ShouldRetryLater(err) {
		t.Errorf("ShouldRetryLater(%q) = false", err)
	}
}

// TestFactRejectedRetriedOnceWithGetBody: a request whose stream the
// upstream rejects with H3_REQUEST_REJECTED (its GOAWAY came after the
// stream opened) is sent again on a new connection with a body from
// GetBody, called once.
func TestFactRejectedRetriedOnceWithGetBody(t *testing.T) {
	r := newFactRig(t)
	payload := randomPayload(t, 64<<10)
	fr := r.post(payload, true, stepReject, stepPass)
	resp, err := r.roundTrip(fr)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d, want 200", resp.StatusCode)
	}
	if n := fr.getBodys.Load(); n != 1 {
		t.Errorf("GetBody called %d times, want 1", n)
	}
	if got := r.received(); len(got) != 1 || !bytes.Equal(got[0], payload) {
		t.Errorf("the upstream processed %d requests, want the one, intact", len(got))
	}
	if n := r.d.dialed(); n != 2 {
		t.Errorf("%d connections dialed, want 2", n)
	}
}

// TestFactRejectedWithoutGetBody: without GetBody, the first
// H3_REQUEST_REJECTED fails the request with the HTTP/2 transport's words,
// prefixed "http3:", wrapping the *http3.Error. The body is closed by the
// time RoundTrip returns.
func TestFactRejectedWithoutGetBody(t *testing.T) {
	r := newFactRig(t)
	fr := r.post(randomPayload(t, 64<<10), false, stepReject)
	_, err := r.roundTrip(fr)
	if err == nil || err.Error() != factTextCannotRetry {
		t.Fatalf("RoundTrip error %v, want %q", err, factTextCannotRetry)
	}
	assertRejected(t, err)
	if !fr.body.closed.Load() {
		t.Error("the request body is not closed when RoundTrip returns")
	}
	if got := r.received(); len(got) != 0 {
		t.Errorf("the upstream processed %d requests, want none", len(got))
	}
}

// TestFactRejectedTwiceBareError: quic-go sends a rejected request again
// once only. When the second attempt is rejected too, RoundTrip returns the
// *http3.Error bare, "http3: parsing frame failed: H3_REQUEST_REJECTED",
// after one GetBody call; nothing says that the request may be sent again.
func TestFactRejectedTwiceBareError(t *testing.T) {
	r := newFactRig(t)
	fr := r.post(randomPayload(t, 64<<10), true, stepReject, stepReject, stepPass)
	_, err := r.roundTrip(fr)
	if err == nil || err.Error() != factTextRejected {
		t.Fatalf("RoundTrip error %v, want %q", err, factTextRejected)
	}
	assertRejected(t, err)
	if n := fr.getBodys.Load(); n != 1 {
		t.Errorf("GetBody called %d times, want 1", n)
	}
	if n := r.d.dialed(); n != 2 {
		t.Errorf("%d connections dialed, want 2", n)
	}
	if !fr.body.closed.Load() {
		t.Error("the first body is not closed when RoundTrip returns")
	}
	if got := r.received(); len(got) != 0 {
		t.Errorf("the upstream processed %d requests, want none", len(got))
	}
}

// TestFactGoAwayRetriedWithoutGetBody: a request that finds its connection
// closed by a GOAWAY opens no stream, and is sent on a new connection with
// the same body, untouched: no GetBody needed.
func TestFactGoAwayRetriedWithoutGetBody(t *testing.T) {
	r := newFactRig(t)
	r.warmUp()
	payload := randomPayload(t, 64<<10)
	fr := r.post(payload, false, stepGoAway, stepPass)
	resp, err := r.roundTrip(fr)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d, want 200", resp.StatusCode)
	}
	if got := r.received(); len(got) != 2 || !bytes.Equal(got[1], payload) {
		t.Errorf("the upstream processed %d requests, want the warm-up and this one, intact", len(got))
	}
	if n := r.d.dialed(); n != 2 {
		t.Errorf("%d connections dialed, want 2", n)
	}
}

// TestFactGoAwayTwiceBareError: when the new connection has a GOAWAY before
// the stream too, RoundTrip fails with "http3: conn unusable: connection
// in graceful shutdown". The body was never read and GetBody never called.
func TestFactGoAwayTwiceBareError(t *testing.T) {
	r := newFactRig(t)
	r.warmUp()
	fr := r.post(randomPayload(t, 64<<10), true, stepGoAway, stepGoAway, stepPass)
	_, err := r.roundTrip(fr)
	if err == nil || err.Error() != factTextGoAway {
		t.Fatalf("RoundTrip error %v, want %q", err, factTextGoAway)
	}
	if _, ok := errors.AsType[*http3.Error](err); ok {
		t.Errorf("%v matches *http3.Error; only its text tells it", err)
	}
	if !transport.ShouldRetryLater(err) {
		t.Errorf("ShouldRetryLater(%q) = false", err)
	}
	if n := fr.getBodys.Load(); n != 0 {
		t.Errorf("GetBody called %d times, want 0", n)
	}
	if n := fr.body.reads.Load(); n != 0 {
		t.Errorf("the body was read %d times, want 0", n)
	}
	if got := r.received(); len(got) != 1 {
		t.Errorf("the upstream processed %d requests, want the warm-up only", len(got))
	}
}

// TestFactShutdownFinishesAcceptedRequest: a graceful Shutdown lets a
// request whose stream it had accepted finish, so a GOAWAY never costs an
// accepted request (and a resend of a rejected one is no duplicate).
func TestFactShutdownFinishesAcceptedRequest(t *testing.T) {
	started, finish := make(chan struct{}), make(chan struct{})
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		close(started)
		<-finish
		io.Copy(io.Discard, req.Body)
		w.WriteHeader(http.StatusOK)
	}), false)
	client := newClient(t, &dialer{})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://"+up.addr+"/",
		bytes.NewReader([]byte("accepted")))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := client.RoundTrip(req)
		done <- result{resp, err}
	}()
	<-started
	shutdown := up.restart()
	close(finish)
	res := <-done
	if res.err != nil {
		t.Fatalf("RoundTrip: %v", res.err)
	}
	res.resp.Body.Close()
	if res.resp.StatusCode != http.StatusOK {
		t.Errorf("status %d, want 200", res.resp.StatusCode)
	}
	select {
	case <-shutdown:
	case <-time.After(shutdownGrace):
		t.Error("the graceful Shutdown did not return")
	}
}
