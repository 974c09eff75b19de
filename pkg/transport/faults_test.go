package transport_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// slowUpstream is an HTTP/2 upstream whose handler reads the body and
// signals once it has read `after` bytes; then it either reads on or, when
// abort, resets the stream.
type slowUpstream struct {
	*upstream
	after     int64
	abort     bool
	started   chan struct{} // closed once `after` bytes arrived
	once      sync.Once
	completed atomic.Int64 // bodies read to their end
}

func newSlowUpstream(t *testing.T, after int64, abort bool) *slowUpstream {
	s := &slowUpstream{upstream: &upstream{applied: map[string]int{}}, after: after, abort: abort, started: make(chan struct{})}
	s.srv = serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.CopyN(io.Discard, r.Body, s.after); err != nil {
			return
		}
		s.once.Do(func() { close(s.started) })
		if s.abort {
			panic(http.ErrAbortHandler) // the stream is reset mid-body
		}
		if _, err := io.Copy(io.Discard, r.Body); err == nil {
			s.completed.Add(1)
		}
	}), proxytest.Options{})
	return s
}

// trackedSource is a request body fed by a pipe, that records its Close
// and every Read that starts after the point marked with stopped.
type trackedSource struct {
	*io.PipeReader
	pw *io.PipeWriter // the pipe's other end, for bytes beyond the first n

	n       int64         // bytes the source yields before it blocks
	got     atomic.Int64  // bytes its Reads have returned
	blocked chan struct{} // closed once a Read starts after the n bytes: one that blocks
	once    sync.Once

	stopped atomic.Bool
	late    atomic.Int64
	closed  atomic.Bool
}

func (s *trackedSource) Read(p []byte) (int, error) {
	if s.stopped.Load() {
		s.late.Add(1)
	}
	if s.got.Load() >= s.n {
		s.once.Do(func() { close(s.blocked) })
	}
	n, err := s.PipeReader.Read(p)
	s.got.Add(int64(n))
	return n, err
}

func (s *trackedSource) Close() error {
	s.closed.Store(true)
	return s.PipeReader.Close()
}

// newBlockingSource returns a body that yields n bytes and then blocks
// until it is closed, like a client that stalls mid-upload; or, when ctx is
// not nil, until ctx ends, like a client whose own transport gives up (the
// HTTP/1 client transport waits for its body Read to return). Its blocked
// channel is closed once a Read is under way that has nothing to return.
func newBlockingSource(t *testing.T, n int, ctx context.Context) *trackedSource {
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	wg.Go(func() {
		pw.Write(bytes.Repeat([]byte{'x'}, n)) // returns once read, or when the reader is closed
		if ctx != nil {
			<-ctx.Done()
			pw.CloseWithError(ctx.Err())
		}
	})
	t.Cleanup(func() {
		pw.Close()
		wg.Wait()
	})
	return &trackedSource{PipeReader: pr, pw: pw, n: int64(n), blocked: make(chan struct{})}
}

type proxyCase struct {
	name  string
	h2    bool // HTTP/2 front (and client), else HTTP/1.1
	build func(u *upstream, tr *transport.Transport) http.Handler
}

func proxyCases() []proxyCase {
	rp := func(u *upstream, tr *transport.Transport) http.Handler { return newProxy(u, tr, tr.ErrorHandler, nil) }
	hand := func(u *upstream, tr *transport.Transport) http.Handler { return newHandProxy(u, tr, tr.ErrorHandler) }
	return []proxyCase{
		{"HTTP1/ReverseProxy", false, rp},
		{"HTTP1/hand-written", false, hand},
		{"HTTP2/ReverseProxy", true, rp},
		{"HTTP2/hand-written", true, hand},
	}
}

// checkAfter waits until every handler of f returned and tr released every
// body, then checks nothing was held back or read late.
func checkAfter(t *testing.T, f *front, tr *transport.Transport) {
	t.Helper()
	f.active.Wait()
	drain(t, tr)
	f.checkLate(t)
}

// TestClientVanishesMidUpload: the client stops mid-body and goes away.
func TestClientVanishesMidUpload(t *testing.T) {
	for _, pc := range proxyCases() {
		t.Run(pc.name, func(t *testing.T) {
			u := newSlowUpstream(t, 64<<10, false)
			tr := transport.New(transportTo(t, u.srv), quietConfig())
			f := newFront(t, pc.h2, pc.build(u.upstream, tr))
			client := f.client(t)

			ctx, cancel := context.WithCancel(context.Background())
			src := newBlockingSource(t, 128<<10, ctx)
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.srv.URL, src)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				resp, err := client.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()
			<-u.started // the body is flowing through the proxy
			cancel()    // and the client vanishes
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("client RoundTrip: %v, want context.Canceled", err)
			}
			checkAfter(t, f, tr)
			if n := u.completed.Load(); n != 0 {
				t.Errorf("the upstream read %d truncated bodies to a clean end", n)
			}
		})
	}
}

// TestUpstreamResetsMidBody: the upstream resets the stream after reading
// part of the body; the client gets 502 (the upstream may have acted on the
// request, so no 429).
func TestUpstreamResetsMidBody(t *testing.T) {
	for _, pc := range proxyCases() {
		t.Run(pc.name, func(t *testing.T) {
			u := newSlowUpstream(t, 64<<10, true)
			tr := transport.New(transportTo(t, u.srv), quietConfig())
			f := newFront(t, pc.h2, pc.build(u.upstream, tr))
			body := uniformBodies(9, 1, 1<<20, 1<<20)[0]
			resp, err := f.client(t).RoundTrip(newPost(context.Background(), f.srv.URL, body, ""))
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadGateway {
					t.Errorf("status %s, want 502", resp.Status)
				}
			} else if pc.h2 {
				t.Errorf("client RoundTrip: %v", err) // HTTP/1 may drop the conn mid-upload instead of answering
			}
			checkAfter(t, f, tr)
			if st := tr.Stats(); st.RetryLaterWritten != 0 {
				t.Errorf("a reset mid-body was answered 429: %+v", st)
			}
		})
	}
}

// TestContextCancelledWhileSourceBlocks: the request's context ends while
// the source is blocked in a Read. RoundTrip returns at once, the source is
// closed (which unblocks it), never read again, and everything is released.
func TestContextCancelledWhileSourceBlocks(t *testing.T) {
	u := newSlowUpstream(t, 64<<10, false)
	tr := transport.New(transportTo(t, u.srv), quietConfig())
	ctx, cancel := context.WithCancel(context.Background())
	src := newBlockingSource(t, 64<<10, nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.srv.URL, src)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-u.started
	<-src.blocked // the filler's last Read started before the end; no other may
	cancel()
	err = <-done
	src.stopped.Store(true)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("RoundTrip: %v, want context.Canceled", err)
	}
	drain(t, tr)
	if !src.closed.Load() {
		t.Error("the source was not closed")
	}
	if n := src.late.Load(); n != 0 {
		t.Errorf("%d source reads after RoundTrip returned", n)
	}
}

// TestResponseBeforeBody: the upstream answers before reading the body
// (docs/design.md, fact 4); the client closes the response while the
// source is blocked in a Read. Closing the response body ends the request:
// the Read under way is the source's last (teebody.Tee.Close), what it
// brings is dropped, the source is closed, and everything is released.
//
// The source's Close waits until that Read has returned bytes, as an HTTP/1
// server body's Close waits for a pending Read (fact 7), so that a Tee that
// read on after the end would start a Read the test sees. The response body
// is closed only once that Read is under way: one that started after the
// end would be the one Tee.Close allows, which the filler may have been
// about to start.
func TestResponseBeforeBody(t *testing.T) {
	const size = 64 << 10
	var received atomic.Int64
	handled := make(chan struct{})
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(handled)
		w.WriteHeader(http.StatusAccepted)
		w.(http.Flusher).Flush()
		n, _ := io.Copy(io.Discard, r.Body)
		received.Store(n)
	}), proxytest.Options{})
	tr := transport.New(transportTo(t, srv), quietConfig())

	src := &heldSource{
		trackedSource: newBlockingSource(t, size, nil),
		closing:       make(chan struct{}),
		release:       make(chan struct{}),
	}
	req, err := http.NewRequest(http.MethodPost, srv.URL, src)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("status %s", resp.Status)
	}
	if err := tr.Drain(canceledContext()); err == nil {
		t.Error("Drain returned while the response body was open")
	}
	<-src.blocked // the body went upstream whole and the filler waits in a Read
	resp.Body.Close()
	src.stopped.Store(true)
	<-src.closing
	if _, err := src.pw.Write([]byte("late")); err != nil { // the Read under way returns them
		t.Fatalf("writing to the source: %v", err)
	}
	close(src.release)
	drain(t, tr)
	if !src.closed.Load() {
		t.Error("the source was not closed")
	}
	if n := src.late.Load(); n != 0 {
		t.Errorf("%d source reads started after the response body was closed", n)
	}
	if st := tr.Stats(); st.Buffered != 1 {
		t.Errorf("stats %+v", st)
	}
	<-handled
	if n := received.Load(); n > size {
		t.Errorf("the upstream received %d bytes, want at most the %d read before the end", n, size)
	}
}

// heldSource is a trackedSource whose Close, once called, waits for
// release before it closes the pipe.
type heldSource struct {
	*trackedSource
	closing chan struct{} // closed when Close is called
	release chan struct{}
}

func (s *heldSource) Close() error {
	close(s.closing)
	<-s.release
	return s.trackedSource.Close()
}

func canceledContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// TestHTTP1UpstreamClosesConnections: an HTTP/1.1 upstream closes
// kept-alive connections behind the client's back. net/http's HTTP/1
// transport sends such a request again only when nothing of it was
// written, or when it is replayable: GetBody set, and an idempotent method
// or an Idempotency-Key header (Request.isReplayable;
// golang.org/issue/19943). These writes carry an Idempotency-Key. Without
// the transport they fail with "server closed idle connection"; with it
// net/http sends again those whose body it had not read yet (it reuses the
// unread first body, but needs GetBody set to deem the request
// replayable). The failures left are those net/http never retries whatever
// the body (part of the request already written to a dead connection:
// "broken pipe"), and those written on the dead connection, whose rewind
// GetBody refuses since the upstream may have processed them
// (TestWrittenReplayableNotResent).
func TestHTTP1UpstreamClosesConnections(t *testing.T) {
	retryable := func(kind string) bool {
		return strings.Contains(kind, "server closed idle connection") || strings.Contains(kind, "cannot rewind")
	}
	send := func(rt http.RoundTripper, u *upstream, seed uint64) loadResult {
		bodies := uniformBodies(seed, requestCount(1000), 1, 64<<10)
		return runRequests(rt, len(bodies), 8, func(i int) *http.Request {
			req := newPost(context.Background(), u.srv.URL, bodies[i], "")
			req.Header.Set("Idempotency-Key", req.Header.Get(hdrSum))
			return req
		})
	}

	u := newUpstream(t, false, 5)
	broken := send(transportTo(t, u.srv), u, 21)
	t.Logf("without the transport: %v", broken)
	n := 0
	for kind, c := range broken.errs {
		if retryable(kind) {
			n += c
		}
	}
	if n == 0 {
		t.Errorf("no failure that a GetBody would avoid: the injector does not work (%v)", broken)
	}

	u = newUpstream(t, false, 5)
	tr := transport.New(transportTo(t, u.srv), quietConfig())
	fixed := send(tr, u, 22)
	drain(t, tr)
	st := tr.Stats()
	t.Logf("with the transport: %v; wrong bytes %d; stats %+v", fixed, u.wrong.Load(), st)
	for kind, c := range fixed.errs {
		if retryable(kind) {
			t.Errorf("%d failures %q with the transport", c, kind)
		}
	}
	if u.wrong.Load() != 0 {
		t.Errorf("%d bodies arrived with wrong bytes", u.wrong.Load())
	}
}
