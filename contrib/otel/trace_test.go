package otel_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	teebodyotel "github.com/teebody/teebody/contrib/otel"
	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// tracing is a TracerProvider whose ended spans a SpanRecorder keeps.
type tracing struct {
	tp *sdktrace.TracerProvider
	sr *tracetest.SpanRecorder
}

func newTracing(t *testing.T) tracing {
	t.Helper()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tracing{tp, sr}
}

// onlySpan returns the one span that ended, or fails the test.
func (tr tracing) onlySpan(t *testing.T) sdktrace.ReadOnlySpan {
	t.Helper()
	ended := tr.sr.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans ended; want 1", len(ended))
	}
	return ended[0]
}

// upstream starts an upstream with opts, closed at the end of the test, and
// returns it with a client transport to it.
func upstream(t *testing.T, opts proxytest.Options) (*proxytest.Server, *http.Transport) {
	t.Helper()
	s := proxytest.NewServer(http.HandlerFunc(discard), opts)
	t.Cleanup(s.Close)
	inner := s.Transport()
	t.Cleanup(inner.CloseIdleConnections)
	return s, inner
}

// post returns a POST of body to url with ctx, without GetBody, as a
// proxy's inbound request has.
func post(t *testing.T, ctx context.Context, url string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, io.NopCloser(bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	return req
}

// attrs returns s's attributes by key.
func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// events returns s's events as "name key=value ...", in order.
func events(s sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, e := range s.Events() {
		text := e.Name
		for _, kv := range e.Attributes {
			text += " " + string(kv.Key) + "=" + kv.Value.String()
		}
		out = append(out, text)
	}
	return out
}

// client returns the RoundTripper of the documented order:
// otelhttp.NewTransport(teebodyotel.NewTransport(tr)).
func (tr tracing) client(t *transport.Transport) http.RoundTripper {
	return otelhttp.NewTransport(teebodyotel.NewTransport(t), otelhttp.WithTracerProvider(tr.tp))
}

// TestTraceReplay: a request that the upstream's first connection refuses
// with a graceful GOAWAY is sent twice; its client span has a resend count
// of 1 and one replay event.
func TestTraceReplay(t *testing.T) {
	up, inner := upstream(t, proxytest.Options{RefuseEvery: math.MaxInt64})
	tracing := newTracing(t)
	body := bytes.Repeat([]byte("r"), 100<<10)
	if err := roundTripAndClose(tracing.client(transport.New(inner, transport.DefaultConfig())),
		post(t, context.Background(), up.URL, body)); err != nil {
		t.Fatal(err)
	}
	if up.Goaways() != 1 {
		t.Fatalf("the upstream sent %d GOAWAYs; want 1", up.Goaways())
	}
	span := tracing.onlySpan(t)
	if span.SpanKind() != trace.SpanKindClient {
		t.Errorf("span kind %v; want client", span.SpanKind())
	}
	a := attrs(span)
	if v, ok := a[teebodyotel.ResendCountKey]; !ok || v.AsInt64() != 1 {
		t.Errorf("http.request.resend_count = %v (present %v); want 1", v.String(), ok)
	}
	if v := a[teebodyotel.BufferedKey]; !v.AsBool() {
		t.Errorf("teebody.buffered = %v; want true", v.String())
	}
	if v := a[teebodyotel.PeakSizeKey]; v.AsInt64() < int64(len(body)) {
		t.Errorf("teebody.replay_buffer.peak_size = %v; want at least %d", v.String(), len(body))
	}
	if got, want := events(span), []string{"teebody.replay teebody.attempt=2"}; !slices.Equal(got, want) {
		t.Errorf("events %q; want %q", got, want)
	}
	if v := a["http.response.status_code"]; v.AsInt64() != http.StatusOK {
		t.Errorf("otelhttp's http.response.status_code = %v; want 200", v.String())
	}
}

// TestTraceRefused: a body over the per-request limit, to an upstream that
// refuses every connection once it has more than the limit, cannot be
// replayed; its span has a refusal event with the reason, no resend count,
// and otelhttp's error status. (Refused any earlier, a body still within
// the limit would be replayed first.)
func TestTraceRefused(t *testing.T) {
	cfg := transport.DefaultConfig()
	cfg.PerRequestBytes = 64 << 10
	up, inner := upstream(t, proxytest.Options{RefuseEvery: 1, RefuseAfter: cfg.PerRequestBytes})
	tracing := newTracing(t)
	err := roundTripAndClose(tracing.client(transport.New(inner, cfg)),
		post(t, context.Background(), up.URL, bytes.Repeat([]byte("r"), 1<<20)))
	if !errors.Is(err, teebody.ErrNotReplayable) {
		t.Fatalf("RoundTrip: %v; want an error matching ErrNotReplayable", err)
	}
	span := tracing.onlySpan(t)
	if v, ok := attrs(span)[teebodyotel.ResendCountKey]; ok {
		t.Errorf("http.request.resend_count = %v; want none", v.String())
	}
	if got, want := events(span), []string{"teebody.refused teebody.reason=too_large"}; !slices.Equal(got, want) {
		t.Errorf("events %q; want %q", got, want)
	}
	if span.Status().Code != codes.Error {
		t.Errorf("status %v; want otelhttp's error", span.Status())
	}
}

// TestTraceWithheld: a POST with an Idempotency-Key, which net/http's HTTP/1
// transport would send again, that the upstream applied before it dropped
// the reused connection, is not sent again; its span has a withheld event,
// no refusal and no resend count.
func TestTraceWithheld(t *testing.T) {
	up := proxytest.NewDropper(t)
	inner := &http.Transport{}
	defer inner.CloseIdleConnections()
	tr := transport.New(inner, transport.DefaultConfig())
	up.WarmUp(t, tr)

	tracing := newTracing(t)
	req := post(t, context.Background(), up.URL, []byte("write"))
	req.Header.Set("Idempotency-Key", "key-1")
	if err := roundTripAndClose(tracing.client(tr), req); err == nil || up.Applied() != 1 {
		t.Fatalf("RoundTrip: %v, applied %d times; want the dropped connection's error, applied once", err, up.Applied())
	}
	span := tracing.onlySpan(t)
	if v, ok := attrs(span)[teebodyotel.ResendCountKey]; ok {
		t.Errorf("http.request.resend_count = %v; want none", v.String())
	}
	if got, want := events(span), []string{"teebody.withheld"}; !slices.Equal(got, want) {
		t.Errorf("events %q; want %q", got, want)
	}
}

// TestTraceNoReplay: a buffered request that the upstream takes at once has
// no resend count and no events.
func TestTraceNoReplay(t *testing.T) {
	up, inner := upstream(t, proxytest.Options{})
	tracing := newTracing(t)
	if err := roundTripAndClose(tracing.client(transport.New(inner, transport.DefaultConfig())),
		post(t, context.Background(), up.URL, []byte("hello"))); err != nil {
		t.Fatal(err)
	}
	span := tracing.onlySpan(t)
	a := attrs(span)
	if v, ok := a[teebodyotel.ResendCountKey]; ok {
		t.Errorf("http.request.resend_count = %v; want none", v.String())
	}
	if v := a[teebodyotel.BufferedKey]; !v.AsBool() {
		t.Errorf("teebody.buffered = %v; want true", v.String())
	}
	if got := events(span); len(got) != 0 {
		t.Errorf("events %q; want none", got)
	}
}

// TestTracePassThrough: a request without a body passes through; its span
// says why, and nothing else of teebody's.
func TestTracePassThrough(t *testing.T) {
	up, inner := upstream(t, proxytest.Options{})
	tracing := newTracing(t)
	req, err := http.NewRequest(http.MethodGet, up.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTripAndClose(tracing.client(transport.New(inner, transport.DefaultConfig())), req); err != nil {
		t.Fatal(err)
	}
	a := attrs(tracing.onlySpan(t))
	if v, ok := a[teebodyotel.BufferedKey]; !ok || v.AsBool() {
		t.Errorf("teebody.buffered = %v (present %v); want false", v.String(), ok)
	}
	if v := a[teebodyotel.PassThroughReasonKey].AsString(); v != "no_body" {
		t.Errorf("teebody.pass_through.reason = %q; want no_body", v)
	}
	for _, k := range []attribute.Key{teebodyotel.ResendCountKey, teebodyotel.PeakSizeKey} {
		if v, ok := a[k]; ok {
			t.Errorf("%s = %v; want none", k, v.String())
		}
	}
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestTraceNotRecording: without a recording span in its context, a
// request goes on as it is, and an error comes back as it is.
func TestTraceNotRecording(t *testing.T) {
	errNext := errors.New("next")
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/", bytes.NewReader([]byte("x")))
	if err != nil {
		t.Fatal(err)
	}
	var got *http.Request
	rt := teebodyotel.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = r
		return nil, errNext
	}))
	if _, err := rt.RoundTrip(req); err != errNext {
		t.Errorf("RoundTrip: %v; want next's error", err)
	}
	if got != req {
		t.Error("next got a copy of the request; want the request itself")
	}
}

// TestTraceCloseIdleConnections: CloseIdleConnections reaches next's, as
// http.Client.CloseIdleConnections needs.
func TestTraceCloseIdleConnections(t *testing.T) {
	c := &closer{}
	teebodyotel.NewTransport(c).CloseIdleConnections()
	teebodyotel.NewTransport(roundTripFunc(nil)).CloseIdleConnections() // none to call
	if c.closed != 1 {
		t.Errorf("next's CloseIdleConnections called %d times; want 1", c.closed)
	}
}

type closer struct {
	http.RoundTripper
	closed int
}

func (c *closer) CloseIdleConnections() { c.closed++ }

// TestTraceOtelhttpInside pins what happens in the other order, with
// otelhttp's Transport inside teebody's (its inner RoundTripper) and
// teebodyotel's outside both: a request sent twice makes one client span,
// since the HTTP/2 transport sends the replay within one RoundTrip call;
// that span has no resend count; and teebodyotel records the replay on the
// span in the context it gets, the client span's parent.
func TestTraceOtelhttpInside(t *testing.T) {
	up, inner := upstream(t, proxytest.Options{RefuseEvery: math.MaxInt64})
	tracing := newTracing(t)
	tr := transport.New(otelhttp.NewTransport(inner, otelhttp.WithTracerProvider(tracing.tp)), transport.DefaultConfig())
	ctx, parent := tracing.tp.Tracer("test").Start(context.Background(), "proxy", trace.WithSpanKind(trace.SpanKindServer))
	err := roundTripAndClose(teebodyotel.NewTransport(tr), post(t, ctx, up.URL, bytes.Repeat([]byte("r"), 100<<10)))
	parent.End()
	if err != nil {
		t.Fatal(err)
	}
	if up.Goaways() != 1 {
		t.Fatalf("the upstream sent %d GOAWAYs; want 1", up.Goaways())
	}
	var clients, servers []sdktrace.ReadOnlySpan
	for _, s := range tracing.sr.Ended() {
		switch s.SpanKind() {
		case trace.SpanKindClient:
			clients = append(clients, s)
		case trace.SpanKindServer:
			servers = append(servers, s)
		}
	}
	if len(clients) != 1 || len(servers) != 1 {
		t.Fatalf("%d client spans and %d server spans; want 1 of each", len(clients), len(servers))
	}
	if v, ok := attrs(clients[0])[teebodyotel.ResendCountKey]; ok {
		t.Errorf("client span: http.request.resend_count = %v; want none", v.String())
	}
	if v := attrs(servers[0])[teebodyotel.ResendCountKey]; v.AsInt64() != 1 {
		t.Errorf("parent span: http.request.resend_count = %v; want 1", v.String())
	}
}

// TestTraceEventTimes: the events carry the time their replay or refusal
// happened, not the time RoundTrip returned. A replay event falls between
// the request's start and the upstream's read of the replayed body; a
// refused event comes before the refusal reaches a trace of the caller's,
// which runs after teebodyotel's.
func TestTraceEventTimes(t *testing.T) {
	t.Run("replay", func(t *testing.T) {
		var (
			mu   sync.Mutex
			sent time.Time // when the upstream had read the replay whole
		)
		up := proxytest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			discard(w, r)
			mu.Lock()
			sent = time.Now()
			mu.Unlock()
		}), proxytest.Options{RefuseEvery: math.MaxInt64})
		t.Cleanup(up.Close)
		inner := up.Transport()
		t.Cleanup(inner.CloseIdleConnections)
		tracing := newTracing(t)
		start := time.Now()
		if err := roundTripAndClose(tracing.client(transport.New(inner, transport.DefaultConfig())),
			post(t, context.Background(), up.URL, bytes.Repeat([]byte("r"), 100<<10))); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		checkEventTimes(t, tracing.onlySpan(t), teebodyotel.ReplayEvent, start, sent)
	})
	t.Run("refused", func(t *testing.T) {
		cfg := transport.DefaultConfig()
		cfg.PerRequestBytes = 64 << 10
		up, inner := upstream(t, proxytest.Options{RefuseEvery: 1, RefuseAfter: cfg.PerRequestBytes})
		tracing := newTracing(t)
		var refused atomic.Pointer[time.Time] // when the caller's trace saw the refusal
		ctx := transport.WithBodyTrace(context.Background(), &transport.BodyTrace{
			ReplayRefused: func(teebody.Reason) {
				now := time.Now()
				refused.CompareAndSwap(nil, &now)
			},
		})
		start := time.Now()
		err := roundTripAndClose(tracing.client(transport.New(inner, cfg)), post(t, ctx, up.URL, bytes.Repeat([]byte("r"), 1<<20)))
		if !errors.Is(err, teebody.ErrNotReplayable) || refused.Load() == nil {
			t.Fatalf("RoundTrip: %v, refusal seen %v; want an error matching ErrNotReplayable, seen", err, refused.Load() != nil)
		}
		checkEventTimes(t, tracing.onlySpan(t), teebodyotel.RefusedEvent, start, *refused.Load())
	})
}

// checkEventTimes fails t unless s has an event named name, and each such
// event's time is within [from, to].
func checkEventTimes(t *testing.T, s sdktrace.ReadOnlySpan, name string, from, to time.Time) {
	t.Helper()
	n := 0
	for _, e := range s.Events() {
		if e.Name != name {
			continue
		}
		n++
		if e.Time.Before(from) || e.Time.After(to) {
			t.Errorf("%s event at %v; want within [%v, %v], the request's start and the event's",
				name, e.Time.Sub(from), time.Duration(0), to.Sub(from))
		}
	}
	if n == 0 {
		t.Errorf("no %s event; want one", name)
	}
}
