// Package prometheus exports the Stats of a teebody transport.Transport as
// Prometheus metrics.
// Its Collector reads Stats once per scrape and keeps nothing between scrapes.
//
// It is a module of its own (github.com/teebody/teebody/contrib/prometheus),
// so that the library module stays free of Prometheus:
//
//	import teebodyprom "github.com/teebody/teebody/contrib/prometheus"
//
//	tr := transport.New(inner, cfg)
//	prometheus.MustRegister(teebodyprom.NewCollector(tr.Stats))
//
// The metrics, named teebody_*, export the fields of transport.Stats.
// Counters end in _total; sizes are in bytes and end in _bytes.
// Every label value is exported, zero or not:
//   - teebody_passed_through_requests_total{reason}: transport.PassThroughReason's String.
//   - teebody_replays_refused_total{reason}: teebody.Reason's String.
//   - teebody_error_responses_total{code}: "429" and "502".
//
// A rise in 429 answers has its cause in the refused replays' reasons.
// With reason="no_budget", the shared budget is too small for the load.
// With reason="too_large", bodies outgrow the per-request limit.
//
// For several Transports, register one Collector each under a registerer
// that tells them apart (prometheus.WrapRegistererWith with a label of
// yours), or pass a function that sums their Stats.
package prometheus
