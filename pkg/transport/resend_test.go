package transport_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// The errors quic-go's HTTP/3 transport returns when the upstream did not
// process a request and it gave up sending it again (quicshape_test.go;
// interop/http3 pins them against quic-go itself).
var (
	errH3Rejected = h3StreamReset(h3RequestRejected)
	errH3GoAway   = error(h3GoAway)
	// Without GetBody, which an inner RoundTripper of the caller's may drop.
	errH3CannotRetry = h3CannotRetry(h3StreamReset(h3RequestRejected))
)

// attempts is a fake inner RoundTripper: attempt i (from 0) fails with
// fails[i], or succeeds with an empty 200 once fails runs out. Each attempt
// reads its body in full first, as a transport would before a refusal came.
type attempts struct {
	fails []error

	mu       sync.Mutex
	bodies   [][]byte        // what each attempt read
	got      []io.ReadCloser // each attempt's body
	readErrs []error
}

func (a *attempts) RoundTrip(req *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(req.Body)
	a.mu.Lock()
	n := len(a.bodies)
	a.bodies = append(a.bodies, b)
	a.got = append(a.got, req.Body)
	a.readErrs = append(a.readErrs, err)
	a.mu.Unlock()
	if n < len(a.fails) {
		req.Body.Close() // net/http's contract, also on errors
		return nil, a.fails[n]
	}
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("ok")),
		ContentLength: 2, Request: req, Header: http.Header{}}, nil
}

func (a *attempts) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.bodies)
}

// post returns a POST of payload with ctx, whose body has no GetBody, as a
// proxy's inbound body.
func post(ctx context.Context, payload []byte) *http.Request {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "https://upstream.test/", io.NopCloser(bytes.NewReader(payload)))
	req.ContentLength = int64(len(payload))
	return req
}

func finish(t *testing.T, tr *transport.Transport, resp *http.Response) {
	t.Helper()
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := tr.Drain(ctx); err != nil {
		t.Errorf("Drain: %v", err)
	}
}

// TestResendHTTP3NotProcessed: a request that quic-go says its upstream did
// not process is sent again, each time from a new body with every byte,
// after a pause of 5–10 ms, then 10–20 ms.
func TestResendHTTP3NotProcessed(t *testing.T) {
	for _, first := range []error{errH3Rejected, errH3GoAway, errH3CannotRetry} {
		t.Run(first.Error(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := &attempts{fails: []error{first, errH3Rejected}}
				tr := transport.New(inner, transport.DefaultConfig())
				payload := bytes.Repeat([]byte("teebody "), 8<<10)
				var report transport.Report
				start := time.Now()
				resp, err := tr.RoundTrip(post(transport.WithReport(t.Context(), &report), payload))
				elapsed := time.Since(start)
				if err != nil {
					t.Fatalf("RoundTrip: %v", err)
				}
				finish(t, tr, resp)
				if n := inner.count(); n != 3 {
					t.Fatalf("%d attempts, want 3", n)
				}
				for i, b := range inner.bodies {
					if !bytes.Equal(b, payload) || inner.readErrs[i] != nil {
						t.Errorf("attempt %d read %d of %d bytes, %v", i, len(b), len(payload), inner.readErrs[i])
					}
					for j := range i {
						if inner.got[i] == inner.got[j] {
							t.Errorf("attempts %d and %d had the same body", j, i)
						}
					}
				}
				if elapsed < 15*time.Millisecond || elapsed > 30*time.Millisecond {
					t.Errorf("the resends took %v, want 15 to 30 ms", elapsed)
				}
				if s := tr.Stats(); s.ReplaysServed != 2 {
					t.Errorf("ReplaysServed %d, want 2", s.ReplaysServed)
				}
				if report.Attempts != 3 {
					t.Errorf("Report.Attempts %d, want 3", report.Attempts)
				}
			})
		})
	}
}

// TestResendBounded: six attempts in all, within 155 to 310 ms; then the
// last error comes back, and ErrorHandler answers it with 429.
func TestResendBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fails := make([]error, 10)
		for i := range fails {
			fails[i] = errH3GoAway
		}
		inner := &attempts{fails: fails}
		tr := transport.New(inner, transport.DefaultConfig())
		start := time.Now()
		req := post(t.Context(), []byte("refused"))
		_, err := tr.RoundTrip(req)
		elapsed := time.Since(start)
		if !errors.Is(err, errH3GoAway) {
			t.Fatalf("RoundTrip error %v, want %v", err, errH3GoAway)
		}
		if n := inner.count(); n != 6 {
			t.Errorf("%d attempts, want 6", n)
		}
		if elapsed < 155*time.Millisecond || elapsed > 310*time.Millisecond {
			t.Errorf("the resends took %v, want 155 to 310 ms", elapsed)
		}
		rec := httptest.NewRecorder()
		tr.ErrorHandler(rec, req, err)
		if rec.Code != http.StatusTooManyRequests {
			t.Errorf("ErrorHandler answered %d, want 429", rec.Code)
		}
	})
}

// TestResendNotReplayable: a body that outgrew its limit cannot be sent
// again; RoundTrip's error matches teebody.ErrNotReplayable, keeps the
// upstream's, and gets a 429.
func TestResendNotReplayable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &attempts{fails: []error{errH3Rejected}}
		cfg := transport.DefaultConfig()
		cfg.PerRequestBytes = 1 << 10
		tr := transport.New(inner, cfg)
		req := post(t.Context(), bytes.Repeat([]byte("x"), 64<<10))
		_, err := tr.RoundTrip(req)
		if !errors.Is(err, teebody.ErrNotReplayable) || !errors.Is(err, errH3Rejected) {
			t.Fatalf("RoundTrip error %v, want one matching teebody.ErrNotReplayable and %v", err, errH3Rejected)
		}
		if n := inner.count(); n != 1 {
			t.Errorf("%d attempts, want 1", n)
		}
		if s := tr.Stats(); s.ReplaysRefused.TooLarge != 1 {
			t.Errorf("ReplaysRefused.TooLarge %d, want 1", s.ReplaysRefused.TooLarge)
		}
		rec := httptest.NewRecorder()
		tr.ErrorHandler(rec, req, err)
		if rec.Code != http.StatusTooManyRequests {
			t.Errorf("ErrorHandler answered %d, want 429", rec.Code)
		}
	})
}

// TestResendOnlyHTTP3: no other error is sent again, HTTP/2's included:
// Go's HTTP/2 transport resends a refused stream itself.
func TestResendOnlyHTTP3(t *testing.T) {
	for _, e := range []error{
		errors.New("http2: Transport: cannot retry err [http2: Transport received Server's graceful shutdown GOAWAY] " +
			"after Request.Body was written; define Request.GetBody to avoid this error"),
		errors.New("http3: parsing frame failed: H3_INTERNAL_ERROR"),
		errors.New("dial udp 127.0.0.1:1: connect: connection refused"),
		context.Canceled,
	} {
		inner := &attempts{fails: []error{e}}
		tr := transport.New(inner, transport.DefaultConfig())
		_, err := tr.RoundTrip(post(t.Context(), []byte("once")))
		if err != e {
			t.Errorf("RoundTrip error %v, want %v as is", err, e)
		}
		if n := inner.count(); n != 1 {
			t.Errorf("%v: %d attempts, want 1", e, n)
		}
	}
}

// TestResendStopsWithContext: a request whose context ends is not sent
// again, and a pause ends with the context.
func TestResendStopsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		inner := &attempts{fails: []error{errH3Rejected, errH3Rejected}}
		tr := transport.New(inner, transport.DefaultConfig())
		time.AfterFunc(time.Millisecond, cancel) // within the first pause, at least 5 ms
		start := time.Now()
		_, err := tr.RoundTrip(post(ctx, []byte("cancelled")))
		if elapsed := time.Since(start); elapsed != time.Millisecond {
			t.Errorf("RoundTrip returned after %v, want 1ms, when the context ended", elapsed)
		}
		if !errors.Is(err, errH3Rejected) {
			t.Errorf("RoundTrip error %v, want %v", err, errH3Rejected)
		}
		if n := inner.count(); n != 1 {
			t.Errorf("%d attempts, want 1", n)
		}
	})
}

// TestResendLeftovers: what a failed attempt leaves behind neither blocks
// nor holds the request: a write of its body still under way, and a body
// from GetBody never read nor closed. The request still ends (Drain).
func TestResendLeftovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var stray sync.WaitGroup
		strayErr := make(chan error, 1)
		var calls int
		resent := make(chan struct{})
		inner := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			calls++
			if calls == 1 {
				// A write still under way: it reads on after RoundTrip
				// returned, and never closes the body.
				body := req.Body
				stray.Go(func() {
					_, err := io.Copy(io.Discard, body)
					strayErr <- err
				})
				if _, err := req.GetBody(); err != nil { // a retry body, never touched
					t.Errorf("GetBody: %v", err)
				}
				return nil, errH3Rejected
			}
			close(resent)
			b, err := io.ReadAll(req.Body)
			if err != nil || len(b) != 4<<20 {
				t.Errorf("the resend read %d bytes, %v", len(b), err)
			}
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("ok")),
				ContentLength: 2, Request: req, Header: http.Header{}}, nil
		})
		tr := transport.New(inner, transport.DefaultConfig())
		// A body whose end comes only once the resend started, so that the
		// stray write is still reading then.
		pr, pw := io.Pipe()
		go func() {
			pw.Write(bytes.Repeat([]byte("y"), 1<<20))
			<-resent
			pw.Write(bytes.Repeat([]byte("y"), 3<<20))
			pw.Close()
		}()
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "https://upstream.test/", pr)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		finish(t, tr, resp)
		stray.Wait()
		if err := <-strayErr; !errors.Is(err, teebody.ErrClosed) {
			t.Errorf("the first attempt's body, still read after the resend started, ended with %v; want %v", err, teebody.ErrClosed)
		}
		if calls != 2 {
			t.Errorf("%d attempts, want 2", calls)
		}
	})
}
