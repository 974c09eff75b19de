package proxy

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/teebody/teebody/pkg/transport"
)

// statsCollector turns transport.Stats into Prometheus metrics on each
// scrape: one Stats call per scrape, nothing kept between scrapes. Safe for
// concurrent use, as Stats is.
type statsCollector struct {
	stats func() transport.Stats

	requests, buffered, passed, served, refused *prometheus.Desc
	budgetRefusals, retryLater                  *prometheus.Desc
	held, peak, budget                          *prometheus.Desc
	traces, upstreams                           *prometheus.Desc
}

func newStatsCollector(stats func() transport.Stats) *statsCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("teebody_"+name, help, labels, nil)
	}
	return &statsCollector{
		stats:          stats,
		requests:       d("requests_total", "Requests seen by the transport."),
		buffered:       d("buffered_requests_total", "Requests whose body got a replay buffer."),
		passed:         d("passed_through_requests_total", "Requests handed on untouched, by reason.", "reason"),
		served:         d("replays_served_total", "GetBody calls that returned a body."),
		refused:        d("replays_refused_total", "GetBody calls refused, by reason.", "reason"),
		budgetRefusals: d("budget_refusals_total", "Requests whose buffering the shared budget cut short."),
		retryLater:     d("retry_later_written_total", "429 answers written because a body could not be replayed."),
		held:           d("bytes_held", "Bytes the budget holds now."),
		peak:           d("peak_bytes_held", "Most bytes the budget has held."),
		budget:         d("budget_bytes", "The budget's size in bytes."),
		traces:         d("adaptive_traces_total", "Traces of GOAWAY seen in adaptive mode: refused requests and replays served."),
		upstreams:      d("adaptive_upstreams", "Upstreams that adaptive mode buffers for now."),
	}
}

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.requests, c.buffered, c.passed, c.served, c.refused,
		c.budgetRefusals, c.retryLater, c.held, c.peak, c.budget, c.traces, c.upstreams} {
		ch <- d
	}
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	counter(c.requests, s.Requests)
	counter(c.buffered, s.Buffered)
	counter(c.passed, s.PassedThrough.NoBody, "no_body")
	counter(c.passed, s.PassedThrough.GetBodySet, "get_body_set")
	counter(c.passed, s.PassedThrough.Upgrade, "upgrade")
	counter(c.passed, s.PassedThrough.Disabled, "disabled")
	counter(c.passed, s.PassedThrough.Quiet, "quiet")
	counter(c.served, s.ReplaysServed)
	counter(c.refused, s.ReplaysRefused.TooLarge, "too_large")
	counter(c.refused, s.ReplaysRefused.NoBudget, "no_budget")
	counter(c.refused, s.ReplaysRefused.StreamedPast, "streamed_past")
	counter(c.refused, s.ReplaysRefused.Closed, "closed")
	counter(c.refused, s.ReplaysRefused.Yielded, "yielded")
	counter(c.budgetRefusals, s.BudgetRefusals)
	counter(c.retryLater, s.RetryLaterWritten)
	gauge(c.held, s.BytesHeld)
	gauge(c.peak, s.PeakBytesHeld)
	gauge(c.budget, s.BudgetBytes)
	counter(c.traces, s.AdaptiveTraces)
	gauge(c.upstreams, s.AdaptiveUpstreams)
}
