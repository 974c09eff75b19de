package otel_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	teebodyotel "github.com/teebody/teebody/contrib/otel"
	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// distinctStats has a value of its own in every field, so that a field
// exported under the wrong name or attribute shows.
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

// metric is what a test sees of one instrument: its kind, unit and data
// points, keyed by their encoded attribute sets ("" for none).
type metric struct {
	kind   string // "counter", "updown" or "gauge"
	unit   string
	points map[string]int64
}

// collect returns the teebody metrics that r collects, by name. It fails
// the test on an instrument of ScopeName without a description, or of an
// unexpected type.
func collect(t *testing.T, r sdkmetric.Reader) map[string]metric {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metric{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != teebodyotel.ScopeName {
			t.Errorf("instruments under scope %q", sm.Scope.Name)
			continue
		}
		for _, m := range sm.Metrics {
			if m.Description == "" {
				t.Errorf("%s has no description", m.Name)
			}
			got := metric{unit: m.Unit, points: map[string]int64{}}
			var dps []metricdata.DataPoint[int64]
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				got.kind = "updown"
				if d.IsMonotonic {
					got.kind = "counter"
				}
				if d.Temporality != metricdata.CumulativeTemporality {
					t.Errorf("%s: temporality %v", m.Name, d.Temporality)
				}
				dps = d.DataPoints
			case metricdata.Gauge[int64]:
				got.kind = "gauge"
				dps = d.DataPoints
			default:
				t.Errorf("%s: data of type %T", m.Name, m.Data)
			}
			for _, dp := range dps {
				key := dp.Attributes.Encoded(attribute.DefaultEncoder())
				if _, dup := got.points[key]; dup {
					t.Errorf("%s: two points for {%s}", m.Name, key)
				}
				got.points[key] = dp.Value
			}
			out[m.Name] = got
		}
	}
	return out
}

// newReader returns a ManualReader and a MeterProvider that feeds it; the
// provider is shut down at the end of the test.
func newReader(t *testing.T) (*sdkmetric.ManualReader, *sdkmetric.MeterProvider) {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return r, mp
}

// register calls RegisterMetrics, and Unregister at the end of the test.
func register(t *testing.T, mp *sdkmetric.MeterProvider, stats func() transport.Stats, attrs ...attribute.KeyValue) {
	t.Helper()
	reg, err := teebodyotel.RegisterMetrics(mp, stats, attrs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Unregister() })
}

// diff returns the differences of got from want, one line each, sorted.
func diff(got, want map[string]metric) []string {
	var d []string
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			d = append(d, "missing "+name)
			continue
		}
		if g.kind != w.kind || g.unit != w.unit || !maps.Equal(g.points, w.points) {
			d = append(d, fmt.Sprintf("%s: got %s %q %v; want %s %q %v", name, g.kind, g.unit, g.points, w.kind, w.unit, w.points))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			d = append(d, "unexpected "+name)
		}
	}
	slices.Sort(d)
	return d
}

// TestRegisterMetricsExportsEveryField: each Stats field under its name,
// kind, unit and attributes.
func TestRegisterMetricsExportsEveryField(t *testing.T) {
	r, mp := newReader(t)
	register(t, mp, func() transport.Stats { return distinctStats })
	one := func(kind, unit string, v int64) metric { return metric{kind, unit, map[string]int64{"": v}} }
	want := map[string]metric{
		"teebody.requests":                one("counter", "{request}", 1),
		"teebody.buffered_requests":       one("counter", "{request}", 2),
		"teebody.buffered_quiet_requests": one("counter", "{request}", 22),
		"teebody.passed_through_requests": {"counter", "{request}", map[string]int64{
			"teebody.reason=no_body": 3, "teebody.reason=get_body_set": 4, "teebody.reason=upgrade": 5,
			"teebody.reason=disabled": 6, "teebody.reason=quiet": 7}},
		"teebody.replays_served": one("counter", "{replay}", 8),
		"teebody.replays_refused": {"counter", "{replay}", map[string]int64{
			"teebody.reason=too_large": 9, "teebody.reason=no_budget": 10, "teebody.reason=streamed_past": 11,
			"teebody.reason=closed": 12, "teebody.reason=yielded": 13}},
		"teebody.replays_withheld":     one("counter", "{replay}", 24),
		"teebody.over_budget_requests": one("counter", "{request}", 14),
		"teebody.error_responses": {"counter", "{response}", map[string]int64{
			"http.response.status_code=429": 15, "http.response.status_code=502": 16}},
		"teebody.adaptive_traces":    one("counter", "{trace}", 17),
		"teebody.adaptive_upstreams": one("updown", "{upstream}", 18),
		"teebody.budget.held":        one("updown", "By", 19),
		"teebody.budget.held_peak":   one("gauge", "By", 20),
		"teebody.budget.limit":       one("updown", "By", 21),
		"teebody.yields":             one("counter", "{body}", 23),
	}
	for _, d := range diff(collect(t, r), want) {
		t.Error(d)
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

// TestRegisterMetricsCoversStats: one data point per int64 field of Stats,
// so a field added to Stats without its metric fails here.
func TestRegisterMetricsCoversStats(t *testing.T) {
	r, mp := newReader(t)
	register(t, mp, func() transport.Stats { return distinctStats })
	n := 0
	for _, m := range collect(t, r) {
		n += len(m.points)
	}
	if want := int64Fields(reflect.ValueOf(transport.Stats{})); n != want {
		t.Errorf("%d data points for %d fields of Stats", n, want)
	}
}

// TestRegisterMetricsAttributes: two Transports registered on one
// MeterProvider, told apart by an attribute, each observed with its own
// Stats; after one's Unregister, only the other's are observed.
func TestRegisterMetricsAttributes(t *testing.T) {
	r, mp := newReader(t)
	a := attribute.String("teebody.transport", "a")
	b := attribute.String("teebody.transport", "b")
	regA, err := teebodyotel.RegisterMetrics(mp, func() transport.Stats { return transport.Stats{Requests: 5} }, a)
	if err != nil {
		t.Fatal(err)
	}
	register(t, mp, func() transport.Stats {
		return transport.Stats{Requests: 7, PassedThrough: transport.PassThroughStats{NoBody: 2}}
	}, b)

	got := collect(t, r)
	want := map[string]int64{"teebody.transport=a": 5, "teebody.transport=b": 7}
	if p := got["teebody.requests"].points; !maps.Equal(p, want) {
		t.Errorf("teebody.requests: %v; want %v", p, want)
	}
	if v := got["teebody.passed_through_requests"].points["teebody.reason=no_body,teebody.transport=b"]; v != 2 {
		t.Errorf("teebody.passed_through_requests{no_body, b} = %d; want 2", v)
	}

	if err := regA.Unregister(); err != nil {
		t.Fatal(err)
	}
	want = map[string]int64{"teebody.transport=b": 7}
	if p := collect(t, r)["teebody.requests"].points; !maps.Equal(p, want) {
		t.Errorf("after Unregister: teebody.requests: %v; want %v", p, want)
	}
}

// TestRegisterMetricsOverTransport: a real Transport's traffic to TLS
// HTTP/2 upstreams (one that answers, one whose first connection refuses
// its stream, one that refuses every connection) and to a dead one, then a
// collection: every metric equals its Stats field, and the figures that the
// traffic fixes are what it must leave.
func TestRegisterMetricsOverTransport(t *testing.T) {
	ok := proxytest.NewServer(http.HandlerFunc(discard), proxytest.Options{})
	defer ok.Close()
	once := proxytest.NewServer(http.HandlerFunc(discard), proxytest.Options{RefuseEvery: math.MaxInt64})
	defer once.Close()
	never := proxytest.NewServer(http.HandlerFunc(discard), proxytest.Options{RefuseEvery: 1})
	defer never.Close()
	// The three servers share one certificate, so one client transport
	// reaches them all.
	inner := ok.Transport()
	defer inner.CloseIdleConnections()
	cfg := transport.DefaultConfig()
	cfg.TotalBytes = 4 << 20
	cfg.PerRequestBytes = 4 << 10
	cfg.ErrorLog = proxytest.QuietLog()
	tr := transport.New(inner, cfg)
	r, mp := newReader(t)
	register(t, mp, tr.Stats)

	send := func(target, method string, body []byte, getBody bool, header string) {
		t.Helper()
		req, err := http.NewRequest(method, target, nil)
		if err != nil {
			t.Fatal(err)
		}
		if body != nil {
			req.Body = io.NopCloser(bytes.NewReader(body)) // no GetBody: a proxy's inbound body
			req.ContentLength = int64(len(body))
			if getBody {
				req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
			}
		}
		if header != "" {
			req.Header.Set(header, "v4.channel.k8s.io")
		}
		if err := roundTripAndClose(tr, req); err != nil {
			t.Fatal(err)
		}
	}
	small := []byte("hello, upstream")
	for range 4 {
		send(ok.URL, http.MethodPost, small, false, "") // buffered
	}
	for range 3 {
		send(ok.URL, http.MethodGet, nil, false, "") // no body
	}
	for range 2 {
		send(ok.URL, http.MethodPost, small, true, "") // GetBody set
	}
	send(ok.URL, http.MethodPost, small, false, "X-Stream-Protocol-Version") // upgrade
	send(once.URL, http.MethodPost, bytes.Repeat([]byte("r"), 2<<10), false, "")
	if once.Goaways() != 1 {
		t.Fatalf("the refusing upstream sent %d GOAWAYs; want 1", once.Goaways())
	}
	// A body over the per-request limit to an upstream that refuses it: 429.
	// Then an upstream that cannot be dialled: 502.
	for _, target := range []string{never.URL, "https://" + proxytest.DeadAddr(t)} {
		u, err := url.Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		proxy := &proxytest.HandProxy{Target: u, Transport: tr, ErrorHandler: tr.ErrorHandler}
		proxy.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(make([]byte, 64<<10))))
	}
	if err := tr.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Now the Transport is idle, and its Stats hold still.
	s := tr.Stats()
	got := collect(t, r)
	r2, mp2 := newReader(t)
	register(t, mp2, func() transport.Stats { return s })
	for _, d := range diff(got, collect(t, r2)) {
		t.Errorf("collected against Stats: %s", d)
	}

	fixed := []struct {
		name, point string
		want        int64
	}{
		{"teebody.requests", "", 13},
		{"teebody.buffered_requests", "", 7},
		{"teebody.passed_through_requests", "teebody.reason=no_body", 3},
		{"teebody.passed_through_requests", "teebody.reason=get_body_set", 2},
		{"teebody.passed_through_requests", "teebody.reason=upgrade", 1},
		{"teebody.passed_through_requests", "teebody.reason=disabled", 0},
		{"teebody.error_responses", "http.response.status_code=429", 1},
		{"teebody.error_responses", "http.response.status_code=502", 1},
		{"teebody.budget.held", "", 0},
		{"teebody.budget.limit", "", 4 << 20},
		{"teebody.adaptive_upstreams", "", 0},
	}
	for _, f := range fixed {
		if v, ok := got[f.name].points[f.point]; !ok || v != f.want {
			t.Errorf("%s{%s} = %d (present %v); want %d", f.name, f.point, v, ok, f.want)
		}
	}
	atLeast := []struct {
		name, point string
		min         int64
	}{
		{"teebody.replays_served", "", 1},                          // the HTTP/2 transport may ask more than once
		{"teebody.replays_refused", "teebody.reason=too_large", 1}, // likewise
		{"teebody.budget.held_peak", "", 2 << 10},                  // the refused-once body
	}
	for _, f := range atLeast {
		if v := got[f.name].points[f.point]; v < f.min {
			t.Errorf("%s{%s} = %d; want at least %d", f.name, f.point, v, f.min)
		}
	}
}

// discard is an upstream handler that reads the request body.
func discard(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
}

// roundTripAndClose sends req through rt and reads and closes the response
// body.
func roundTripAndClose(rt http.RoundTripper, req *http.Request) error {
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return err
}
