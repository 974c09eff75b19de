package prometheus_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	teebodyprom "github.com/teebody/teebody/contrib/prometheus"
	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// distinctStats has a value of its own in every field, so that a field
// exported under the wrong name or label shows.
var distinctStats = transport.Stats{
	Requests: 1, Buffered: 2, BufferedQuiet: 22,
	PassedThrough:     transport.PassThroughStats{NoBody: 3, GetBodySet: 4, Upgrade: 5, Disabled: 6, Quiet: 7},
	ReplaysServed:     8,
	ReplaysRefused:    transport.RefusalStats{TooLarge: 9, NoBudget: 10, StreamedPast: 11, Closed: 12, Yielded: 13},
	ReplaysWithheld:   24,
	BudgetRefusals:    14,
	RetryLaterWritten: 15,
	BadGatewayWritten: 16,
	AdaptiveTraces:    17,
	AdaptiveUpstreams: 18,
	BytesHeld:         19,
	PeakBytesHeld:     20,
	BudgetBytes:       21,
	Yields:            23,
}

// TestCollectorExportsEveryField: each Stats field under its name, help,
// type and label.
func TestCollectorExportsEveryField(t *testing.T) {
	c := teebodyprom.NewCollector(func() transport.Stats { return distinctStats })
	const want = `
# HELP teebody_adaptive_traces_total Traces of GOAWAY seen in adaptive mode: requests that failed for want of a replay, and replays served.
# TYPE teebody_adaptive_traces_total counter
teebody_adaptive_traces_total 17
# HELP teebody_adaptive_upstreams Upstreams that adaptive mode buffers for now.
# TYPE teebody_adaptive_upstreams gauge
teebody_adaptive_upstreams 18
# HELP teebody_budget_bytes Size of the budget in bytes; 0 when buffering is disabled.
# TYPE teebody_budget_bytes gauge
teebody_budget_bytes 21
# HELP teebody_buffered_requests_total Requests whose body got a replay buffer.
# TYPE teebody_buffered_requests_total counter
teebody_buffered_requests_total 2
# HELP teebody_buffered_quiet_requests_total Buffered requests to an upstream without a trace of GOAWAY, kept only up to the adaptive floor.
# TYPE teebody_buffered_quiet_requests_total counter
teebody_buffered_quiet_requests_total 22
# HELP teebody_error_responses_total Answers written in place of the upstream's, by status code: 429 when a body could not be sent again, 502 for other upstream errors.
# TYPE teebody_error_responses_total counter
teebody_error_responses_total{code="429"} 15
teebody_error_responses_total{code="502"} 16
# HELP teebody_held_bytes Bytes of request bodies that the budget holds now.
# TYPE teebody_held_bytes gauge
teebody_held_bytes 19
# HELP teebody_held_peak_bytes Most bytes of request bodies that the budget has held at once.
# TYPE teebody_held_peak_bytes gauge
teebody_held_peak_bytes 20
# HELP teebody_over_budget_requests_total Buffered requests whose buffering stopped because the shared budget was spent; they went on without a replay, and most never needed one.
# TYPE teebody_over_budget_requests_total counter
teebody_over_budget_requests_total 14
# HELP teebody_passed_through_requests_total Requests handed on without a replay buffer, by reason.
# TYPE teebody_passed_through_requests_total counter
teebody_passed_through_requests_total{reason="disabled"} 6
teebody_passed_through_requests_total{reason="get_body_set"} 4
teebody_passed_through_requests_total{reason="no_body"} 3
teebody_passed_through_requests_total{reason="quiet"} 7
teebody_passed_through_requests_total{reason="upgrade"} 5
# HELP teebody_replays_refused_total Retries that found no replay of the body, by reason; a request may count more than once.
# TYPE teebody_replays_refused_total counter
teebody_replays_refused_total{reason="closed"} 12
teebody_replays_refused_total{reason="no_budget"} 10
teebody_replays_refused_total{reason="streamed_past"} 11
teebody_replays_refused_total{reason="too_large"} 9
teebody_replays_refused_total{reason="yielded"} 13
# HELP teebody_replays_served_total Bodies handed out again from the replay buffer, for a retry or a resend; one retry may take more than one.
# TYPE teebody_replays_served_total counter
teebody_replays_served_total 8
# HELP teebody_replays_withheld_total Retries refused a replay because the request was written on an HTTP/1 connection that failed, and the upstream may have processed it.
# TYPE teebody_replays_withheld_total counter
teebody_replays_withheld_total 24
# HELP teebody_requests_total Requests given to the transport.
# TYPE teebody_requests_total counter
teebody_requests_total 1
# HELP teebody_yields_total Bodies that gave their share of the budget to smaller bodies and lost their replay.
# TYPE teebody_yields_total counter
teebody_yields_total 23
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// int64Fields counts the int64 fields of v, those of nested structs
// included.
func int64Fields(v reflect.Value) int {
	if v.Kind() == reflect.Int64 {
		return 1
	}
	n := 0
	for i := range v.NumField() {
		n += int64Fields(v.Field(i))
	}
	return n
}

// TestCollectorCoversStats: one series per int64 field of Stats, so a field
// added to Stats without its metric fails here, and every Desc described is
// collected.
func TestCollectorCoversStats(t *testing.T) {
	c := teebodyprom.NewCollector(func() transport.Stats { return distinctStats })
	if got, want := testutil.CollectAndCount(c), int64Fields(reflect.ValueOf(transport.Stats{})); got != want {
		t.Errorf("%d series for %d fields of Stats", got, want)
	}
	reg := prometheus.NewPedanticRegistry() // checks that Collect matches Describe
	reg.MustRegister(c)
	if _, err := reg.Gather(); err != nil {
		t.Error(err)
	}
}

// TestCollectorOverTransport: a real Transport's traffic to a TLS HTTP/2
// upstream, scraped through promhttp: every request counted once, by what
// the Transport did with it, and the budget back to empty.
func TestCollectorOverTransport(t *testing.T) {
	up := proxytest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}), proxytest.Options{})
	defer up.Close()
	inner := up.Transport()
	defer inner.CloseIdleConnections()
	cfg := transport.DefaultConfig()
	cfg.TotalBytes = 4 << 20
	tr := transport.New(inner, cfg)

	reg := prometheus.NewRegistry()
	reg.MustRegister(teebodyprom.NewCollector(tr.Stats))
	metrics := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer metrics.Close()

	send := func(n int, method string, body func() io.Reader, header string) {
		for range n {
			req, err := http.NewRequestWithContext(context.Background(), method, up.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			if body != nil {
				req.Body = io.NopCloser(body()) // no GetBody: a proxy's inbound body
			}
			if header != "" {
				req.Header.Set(header, "v4.channel.k8s.io")
			}
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	stream := func() io.Reader { return io.MultiReader(strings.NewReader("hello, "), strings.NewReader("upstream")) }
	send(4, http.MethodPost, stream, "")                          // buffered
	send(3, http.MethodGet, nil, "")                              // no body
	send(1, http.MethodPost, stream, "X-Stream-Protocol-Version") // upgrade
	for range 2 {                                                 // GetBody set by http.NewRequest
		req, err := http.NewRequest(http.MethodPost, up.URL, strings.NewReader("rewindable"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if err := tr.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The scrape matches a Collector over the Stats this traffic must leave,
	// on the metrics it fixes (peak bytes and refusals at the request's end
	// depend on timing).
	want := transport.Stats{
		Requests: 10, Buffered: 4,
		PassedThrough: transport.PassThroughStats{NoBody: 3, GetBodySet: 2, Upgrade: 1},
		BudgetBytes:   4 << 20,
	}
	names := []string{"teebody_requests_total", "teebody_buffered_requests_total", "teebody_passed_through_requests_total",
		"teebody_held_bytes", "teebody_budget_bytes", "teebody_error_responses_total"}
	text, err := testutil.CollectAndFormat(teebodyprom.NewCollector(func() transport.Stats { return want }), expfmt.TypeTextPlain, names...)
	if err != nil {
		t.Fatal(err)
	}
	if err := testutil.ScrapeAndCompare(metrics.URL, bytes.NewReader(text), names...); err != nil {
		t.Error(err)
	}
}
