package transport_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// hookLog records the calls of BodyTrace hooks as lines, in the order they
// ran.
type hookLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *hookLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *hookLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// trace returns a BodyTrace whose every hook adds a line to l, after
// prefix.
func (l *hookLog) trace(prefix string) *transport.BodyTrace {
	return &transport.BodyTrace{
		PassedThrough: func(r transport.PassThroughReason) { l.add("%spassed through %v", prefix, r) },
		BodyKept:      func() { l.add("%skept", prefix) },
		SendStart:     func(attempt int) { l.add("%ssend %d", prefix, attempt) },
		GotReplay:     func() { l.add("%sgot replay", prefix) },
		ReplayRefused: func(r teebody.Reason) { l.add("%srefused %v", prefix, r) },
		Resend:        func(err error) { l.add("%sresend after %v", prefix, err) },
		BodyReleased:  func() { l.add("%sreleased", prefix) },
	}
}

// checkLines fails t unless got is want.
func checkLines(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("hooks called:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// TestBodyTraceResend: an HTTP/3 request that the upstream did not process
// is sent again; the hooks run in the order of the events, the release
// last, before Drain returns.
func TestBodyTraceResend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &attempts{fails: []error{errH3Rejected}}
		tr := transport.New(inner, transport.DefaultConfig())
		var log hookLog
		resp, err := tr.RoundTrip(post(transport.WithBodyTrace(t.Context(), log.trace("")), []byte("resent")))
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		finish(t, tr, resp)
		checkLines(t, log.get(), []string{
			"kept", "send 1", "got replay", "resend after " + errH3Rejected.Error(), "send 2", "released",
		})
	})
}

// TestBodyTraceRefused: a replay of a body over its limit is refused, with
// the reason, and nothing is sent again.
func TestBodyTraceRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &attempts{fails: []error{errH3Rejected}}
		cfg := transport.DefaultConfig()
		cfg.PerRequestBytes = 1 << 10
		tr := transport.New(inner, cfg)
		var log hookLog
		_, err := tr.RoundTrip(post(transport.WithBodyTrace(t.Context(), log.trace("")), bytes.Repeat([]byte("x"), 64<<10)))
		if err == nil {
			t.Fatal("RoundTrip succeeded; want the refusal")
		}
		if err := tr.Drain(t.Context()); err != nil {
			t.Fatal(err)
		}
		checkLines(t, log.get(), []string{"kept", "send 1", "refused " + teebody.ReasonTooLarge.String(), "released"})
	})
}

// TestBodyTracePassedThrough: a request without a body passes through;
// only PassedThrough is called, before the inner RoundTripper gets it.
func TestBodyTracePassedThrough(t *testing.T) {
	var log hookLog
	tr := transport.New(roundTripFunc(func(req *http.Request) (*http.Response, error) {
		log.add("inner")
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	}), transport.DefaultConfig())
	req, err := http.NewRequestWithContext(transport.WithBodyTrace(t.Context(), log.trace("")), http.MethodGet, "http://127.0.0.1/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTripAndClose(tr, req); err != nil {
		t.Fatal(err)
	}
	checkLines(t, log.get(), []string{"passed through " + transport.PassThroughNoBody.String(), "inner"})
}

// TestBodyTraceNested: the hooks of every trace in the context run, the
// newest trace's first.
func TestBodyTraceNested(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &attempts{fails: []error{errH3Rejected}}
		tr := transport.New(inner, transport.DefaultConfig())
		var log hookLog
		ctx := transport.WithBodyTrace(t.Context(), log.trace("outer "))
		ctx = transport.WithBodyTrace(ctx, log.trace("inner "))
		resp, err := tr.RoundTrip(post(ctx, []byte("nested")))
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		finish(t, tr, resp)
		var want []string
		for _, line := range []string{"kept", "send 1", "got replay", "resend after " + errH3Rejected.Error(), "send 2", "released"} {
			want = append(want, "inner "+line, "outer "+line)
		}
		checkLines(t, log.get(), want)
	})
}

// TestBodyTraceAnsweredBeforeRead: a response that comes before the inner
// RoundTripper reads the body starts the send, before RoundTrip returns;
// the Read that follows does not start it again.
func TestBodyTraceAnsweredBeforeRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start, read := make(chan struct{}), make(chan struct{})
		tr := transport.New(roundTripFunc(func(out *http.Request) (*http.Response, error) {
			go func() { // the body goes out after the response, as HTTP/2 may send it
				defer close(read)
				<-start
				io.Copy(io.Discard, out.Body)
				out.Body.Close()
			}()
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("ok")), ContentLength: 2, Request: out}, nil
		}), transport.DefaultConfig())
		var log hookLog
		resp, err := tr.RoundTrip(post(transport.WithBodyTrace(t.Context(), log.trace("")), []byte("early")))
		if err != nil {
			t.Fatal(err)
		}
		checkLines(t, log.get(), []string{"kept", "send 1"})
		close(start)
		<-read
		finish(t, tr, resp)
		checkLines(t, log.get(), []string{"kept", "send 1", "released"})
	})
}

// TestBodyTraceDrainWaitsForReleased: Drain returns only once BodyReleased
// has returned.
func TestBodyTraceDrainWaitsForReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := transport.New(&attempts{}, transport.DefaultConfig())
		proceed := make(chan struct{})
		trace := &transport.BodyTrace{BodyReleased: func() { <-proceed }}
		resp, err := tr.RoundTrip(post(transport.WithBodyTrace(t.Context(), trace), []byte("drained")))
		if err != nil {
			t.Fatal(err)
		}
		go resp.Body.Close() // BodyReleased may run on its goroutine
		drained := make(chan error)
		go func() { drained <- tr.Drain(context.Background()) }()
		synctest.Wait()
		select {
		case err := <-drained:
			t.Fatalf("Drain returned %v while BodyReleased was blocked", err)
		default:
		}
		close(proceed)
		if err := <-drained; err != nil {
			t.Fatal(err)
		}
	})
}

// TestBodyTraceHTTP2Replay: a request that an HTTP/2 upstream's first
// connection refuses with a graceful GOAWAY. SendStart numbers both sends,
// as Report.Attempts counts them; GotReplay runs once per replay served,
// before the send that reads it; the release comes last.
func TestBodyTraceHTTP2Replay(t *testing.T) {
	upstream := serve(t, http.HandlerFunc(countBytes), proxytest.Options{RefuseEvery: math.MaxInt64})
	tr := transport.New(transportTo(t, upstream), transport.DefaultConfig())
	var (
		log    hookLog
		report transport.Report
	)
	req := postReporting(t, upstream.URL, bytes.Repeat([]byte("h"), 100<<10), &report)
	req = req.WithContext(transport.WithBodyTrace(req.Context(), log.trace("")))
	if err := roundTripAndClose(tr, req); err != nil {
		t.Fatal(err)
	}
	if err := tr.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	lines := log.get()
	if len(lines) < 2 || lines[0] != "kept" || lines[len(lines)-1] != "released" {
		t.Fatalf("hooks called %q; want kept first and released last", lines)
	}
	sends, replays := 0, 0
	for _, line := range lines[1 : len(lines)-1] {
		switch {
		case line == "got replay":
			replays++
		case line == fmt.Sprintf("send %d", sends+1) && sends <= replays:
			sends++
		default:
			t.Errorf("hook call %q after %d sends and %d replays", line, sends, replays)
		}
	}
	if goaways := upstream.Goaways(); goaways != 1 || sends != 2 || report.Attempts != 2 {
		t.Errorf("%d sends for %d GOAWAYs, Report.Attempts %d; want 2 for 1, and 2", sends, goaways, report.Attempts)
	}
	if served := tr.Stats().ReplaysServed; int64(replays) != served {
		t.Errorf("GotReplay called %d times; want ReplaysServed, %d", replays, served)
	}
}

// TestWithBodyTraceNil: a nil trace panics when it is attached, not when a
// request uses it.
func TestWithBodyTraceNil(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("WithBodyTrace(ctx, nil) did not panic")
		}
	}()
	transport.WithBodyTrace(t.Context(), nil)
}

// sink is an inner RoundTripper that reads each request body to its end,
// closes it and answers 200 with a body it reuses. It is used by one
// goroutine at a time.
type sink struct {
	buf  [32 << 10]byte
	resp strings.Reader
}

func (s *sink) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		for {
			if _, err := req.Body.Read(s.buf[:]); err == io.EOF {
				break
			} else if err != nil {
				return nil, err
			}
		}
		req.Body.Close()
	}
	s.resp.Reset("ok")
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(&s.resp), ContentLength: 2, Request: req}, nil
}

// allocsPerSend returns the allocations of one RoundTrip of req through rt,
// its response read and closed, and, through tr, the request drained.
func allocsPerSend(t *testing.T, rt http.RoundTripper, tr *transport.Transport, req *http.Request, body *bytes.Reader, data []byte) float64 {
	send := func() {
		body.Reset(data)
		if err := roundTripAndClose(rt, req); err != nil {
			t.Fatal(err)
		}
		if tr != nil {
			if err := tr.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	send() // fill the chunk pool
	return testing.AllocsPerRun(50, send)
}

// bufferedAllocs is what transport.New adds to a buffered request beyond its
// inner transport's allocations, without a BodyTrace: 10 at a913d97, as
// before BodyTrace (bench's TestAllocsPerBufferedRequest).
const bufferedAllocs = 10

// TestAllocsBodyTraceUnused pins that BodyTrace costs nothing to a request
// whose context carries none: a request that passes through allocates what
// the inner transport does, and a buffered one what it did before.
func TestAllocsBodyTraceUnused(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	data := bytes.Repeat([]byte("a"), 1<<10)
	body := bytes.NewReader(data)
	newReq := func(method string) *http.Request {
		req, err := http.NewRequest(method, "https://upstream.invalid/", io.NopCloser(body))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = int64(len(data))
		return req
	}
	inner := &sink{}
	tr := transport.New(inner, transport.DefaultConfig())

	get := newReq(http.MethodGet)
	get.Body = nil
	alone := allocsPerSend(t, inner, nil, get, body, data)
	if through := allocsPerSend(t, tr, tr, get, body, data); through != alone {
		t.Errorf("a GET takes %.1f allocations through transport.New, %.1f through its inner transport; want as many", through, alone)
	}

	put := newReq(http.MethodPut)
	alone = allocsPerSend(t, inner, nil, put, body, data)
	if through := allocsPerSend(t, tr, tr, put, body, data); through-alone > bufferedAllocs {
		t.Errorf("transport.New adds %.1f allocations to a buffered PUT; want at most %d", through-alone, bufferedAllocs)
	}
}
