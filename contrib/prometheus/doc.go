// Package prometheus exports the Stats of a teebody transport.Transport as
// Prometheus metrics, through a prometheus.Collector that reads Stats once
// per scrape and keeps nothing between scrapes.
//
// It is a module of its own (github.com/teebody/teebody/contrib/prometheus),
// so that the library module stays free of Prometheus:
//
//	import teebodyprom "github.com/teebody/teebody/contrib/prometheus"
//
//	tr := transport.New(inner, cfg)
//	prometheus.MustRegister(teebodyprom.NewCollector(tr.Stats))
//
// The metrics, all named teebody_*, are the fields of transport.Stats:
// counters (_total) for the monotonic ones, gauges for the rest. Requests
// passed through are labelled reason="no_body", "get_body_set", "upgrade",
// "disabled" or "quiet" (transport.PassThroughReason's String), refused
// replays reason="too_large", "no_budget", "streamed_past", "closed" or
// "yielded" (teebody.Reason's String); every label value is exported, zero
// or not.
//
// For several Transports, register one Collector each under a registerer
// that tells them apart (prometheus.WrapRegistererWith with a label of
// yours), or pass a function that sums their Stats.
package prometheus
