package prometheus

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/teebody/teebody/pkg/transport"
)

// Collector is a prometheus.Collector over the Stats of a Transport.
// Each Collect calls stats once and turns the snapshot into constant metrics.
// It is safe for concurrent use if stats is, as Transport.Stats is.
//
// Alert on the rate of teebody_error_responses_total{code="429"}.
// Each of those answers is a request that its client must send again.
// The other refusal figures are causes, for tuning the limits:
//   - teebody_replays_refused_total counts retries that found no replay.
//   - teebody_replays_withheld_total counts retries refused because the upstream may have
//     processed the request. Each got a 502.
//   - teebody_over_budget_requests_total counts requests the budget stopped buffering.
//     Most of them never needed a replay.
//   - teebody_yields_total counts bodies that gave their budget to smaller bodies.
//
// Only Transport.ErrorHandler and Transport.Responder count their answers.
// A proxy that answers errors itself leaves teebody_error_responses_total at 0.
type Collector struct {
	stats func() transport.Stats

	requests, buffered, bufferedQuiet, passed *prometheus.Desc
	served, refused, withheld                 *prometheus.Desc
	overBudget, yields                        *prometheus.Desc
	responses                                 *prometheus.Desc
	held, peak, budget                        *prometheus.Desc
	traces, upstreams                         *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a Collector over stats, typically a Transport's
// Stats method value.
func NewCollector(stats func() transport.Stats) *Collector {
	// The help texts say exactly what each figure counts, so that the
	// refusal figures can be told apart in a scrape: a request over budget
	// lost only its replay, and only a request that met a GOAWAY without
	// one is refused a replay and answered 429.
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("teebody_"+name, help, labels, nil)
	}
	return &Collector{
		stats:    stats,
		requests: d("requests_total", "Requests given to the transport."),
		buffered: d("buffered_requests_total", "Requests whose body got a replay buffer."),
		bufferedQuiet: d("buffered_quiet_requests_total",
			"Buffered requests to an upstream without a trace of GOAWAY, kept only up to the adaptive floor."),
		passed: d("passed_through_requests_total",
			"Requests handed on without a replay buffer, by reason.", "reason"),
		served: d("replays_served_total",
			"Bodies handed out again from the replay buffer, for a retry or a resend; one retry may take more than one."),
		refused: d("replays_refused_total",
			"Retries that found no replay of the body, by reason; a request may count more than once.", "reason"),
		withheld: d("replays_withheld_total",
			"Retries refused a replay because the request was written on an HTTP/1 connection that failed, "+
				"and the upstream may have processed it."),
		overBudget: d("over_budget_requests_total",
			"Buffered requests whose buffering stopped because the shared budget was spent; "+
				"they went on without a replay, and most never needed one."),
		yields: d("yields_total",
			"Bodies that gave their share of the budget to smaller bodies and lost their replay."),
		responses: d("error_responses_total",
			"Answers written in place of the upstream's, by status code: "+
				"429 when a body could not be sent again, 502 for other upstream errors.", "code"),
		held:      d("held_bytes", "Bytes of request bodies that the budget holds now."),
		peak:      d("held_peak_bytes", "Most bytes of request bodies that the budget has held at once."),
		budget:    d("budget_bytes", "Size of the budget in bytes; 0 when buffering is disabled."),
		traces:    d("adaptive_traces_total", "Traces of GOAWAY seen in adaptive mode: requests that failed for want of a replay, and replays served."),
		upstreams: d("adaptive_upstreams", "Upstreams that adaptive mode buffers for now."),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.requests, c.buffered, c.bufferedQuiet, c.passed, c.served, c.refused,
		c.withheld, c.overBudget, c.yields, c.responses, c.held, c.peak, c.budget, c.traces, c.upstreams} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	counter(c.requests, s.Requests)
	counter(c.buffered, s.Buffered)
	counter(c.bufferedQuiet, s.BufferedQuiet)
	for r := range transport.PassThroughReasons() {
		counter(c.passed, s.PassedThrough.Count(r), r.String())
	}
	counter(c.served, s.ReplaysServed)
	for r := range transport.RefusalReasons() {
		counter(c.refused, s.ReplaysRefused.Count(r), r.String())
	}
	counter(c.withheld, s.ReplaysWithheld)
	counter(c.overBudget, s.BudgetRefusals)
	counter(c.yields, s.Yields)
	counter(c.responses, s.RetryLaterWritten, strconv.Itoa(http.StatusTooManyRequests))
	counter(c.responses, s.BadGatewayWritten, strconv.Itoa(http.StatusBadGateway))
	gauge(c.held, s.BytesHeld)
	gauge(c.peak, s.PeakBytesHeld)
	gauge(c.budget, s.BudgetBytes)
	counter(c.traces, s.AdaptiveTraces)
	gauge(c.upstreams, s.AdaptiveUpstreams)
}
