package prometheus

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/teebody/teebody/pkg/transport"
)

// Collector is a prometheus.Collector over the Stats of a Transport (or of
// whatever stats returns). Each Collect calls stats once and turns the
// snapshot into constant metrics, so a scrape costs what Stats costs. It is
// safe for concurrent use if stats is, as Transport.Stats is.
type Collector struct {
	stats func() transport.Stats

	requests, buffered, bufferedQuiet      *prometheus.Desc
	passed, served, refused                *prometheus.Desc
	budgetRefusals, retryLater, badGateway *prometheus.Desc
	held, peak, budget, yields             *prometheus.Desc
	traces, upstreams                      *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a Collector over stats, typically a Transport's
// Stats method value.
func NewCollector(stats func() transport.Stats) *Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("teebody_"+name, help, labels, nil)
	}
	return &Collector{
		stats:    stats,
		requests: d("requests_total", "Requests seen by the transport."),
		buffered: d("buffered_requests_total", "Requests whose body got a replay buffer."),
		bufferedQuiet: d("buffered_quiet_requests_total",
			"Buffered requests to an upstream without a trace of GOAWAY, kept only up to the adaptive floor."),
		passed:         d("passed_through_requests_total", "Requests handed on untouched, by reason.", "reason"),
		served:         d("replays_served_total", "GetBody calls that returned a body."),
		refused:        d("replays_refused_total", "GetBody calls refused, by reason.", "reason"),
		budgetRefusals: d("budget_refusals_total", "Requests whose buffering the shared budget cut short."),
		retryLater:     d("retry_later_written_total", "429 answers written because a body could not be replayed."),
		badGateway:     d("bad_gateway_written_total", "502 answers written for the other errors of the upstream."),
		held:           d("bytes_held", "Bytes the budget holds now."),
		peak:           d("peak_bytes_held", "Most bytes the budget has held."),
		budget:         d("budget_bytes", "The budget's size in bytes."),
		yields:         d("yields_total", "Bodies that gave their share of the budget back to smaller bodies and lost their replay."),
		traces:         d("adaptive_traces_total", "Traces of GOAWAY seen in adaptive mode: refused requests and replays served."),
		upstreams:      d("adaptive_upstreams", "Upstreams that adaptive mode buffers for now."),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.requests, c.buffered, c.bufferedQuiet, c.passed, c.served, c.refused,
		c.budgetRefusals, c.retryLater, c.badGateway, c.held, c.peak, c.budget, c.yields, c.traces, c.upstreams} {
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
	for _, r := range transport.PassThroughReasons() {
		counter(c.passed, s.PassedThrough.Count(r), r.String())
	}
	counter(c.served, s.ReplaysServed)
	for _, r := range transport.RefusalReasons() {
		counter(c.refused, s.ReplaysRefused.Count(r), r.String())
	}
	counter(c.budgetRefusals, s.BudgetRefusals)
	counter(c.retryLater, s.RetryLaterWritten)
	counter(c.badGateway, s.BadGatewayWritten)
	gauge(c.held, s.BytesHeld)
	gauge(c.peak, s.PeakBytesHeld)
	gauge(c.budget, s.BudgetBytes)
	counter(c.yields, s.Yields)
	counter(c.traces, s.AdaptiveTraces)
	gauge(c.upstreams, s.AdaptiveUpstreams)
}
