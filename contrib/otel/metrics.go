package otel

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// ScopeName is the instrumentation scope of the Meter that RegisterMetrics
// takes from its MeterProvider.
const ScopeName = "github.com/teebody/teebody/contrib/otel"

// The attribute keys of the metrics.
const (
	// ReasonKey is the reason of teebody.passed_through_requests
	// (transport.PassThroughReason's String) and of teebody.replays_refused
	// (teebody.Reason's String).
	ReasonKey = attribute.Key("teebody.reason")
	// StatusCodeKey is the status code of teebody.error_responses: 429 or 502.
	StatusCodeKey = attribute.Key("http.response.status_code")
)

// RegisterMetrics creates the instruments of the package's metrics on the
// Meter named ScopeName of mp. It registers a callback that calls stats once
// per collection: a Transport's Stats method value, or a function that sums
// the Stats of several Transports.
//
// Every attribute value is observed, zero or not. Each observation also
// carries attrs, which tell apart Transports that share a MeterProvider. A
// shared budget's figures include every Transport's bodies: do not sum them
// across such Transports.
//
// RegisterMetrics returns the callback's registration; its Unregister stops
// the observations. On error, nothing stays registered.
func RegisterMetrics(mp metric.MeterProvider, stats func() transport.Stats, attrs ...attribute.KeyValue) (metric.Registration, error) {
	meter := mp.Meter(ScopeName)
	var (
		m    instruments
		errs error
	)
	// The descriptions are the Prometheus collector's help texts, so that
	// both exports mean the same by each figure.
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = errors.Join(errs, err)
		return c
	}
	upDown := func(name, unit, desc string) metric.Int64ObservableUpDownCounter {
		c, err := meter.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = errors.Join(errs, err)
		return c
	}
	m.requests = counter("teebody.requests", "{request}", "Requests given to the transport.")
	m.buffered = counter("teebody.buffered_requests", "{request}", "Requests whose body got a replay buffer.")
	m.bufferedQuiet = counter("teebody.buffered_quiet_requests", "{request}",
		"Buffered requests to an upstream without a trace of GOAWAY, kept only up to the adaptive floor.")
	m.passed = counter("teebody.passed_through_requests", "{request}",
		"Requests handed on without a replay buffer, by reason.")
	m.served = counter("teebody.replays_served", "{replay}",
		"Bodies handed out again from the replay buffer, for a retry or a resend; one retry may take more than one.")
	m.refused = counter("teebody.replays_refused", "{replay}",
		"Retries that found no replay of the body, by reason; a request may count more than once.")
	m.withheld = counter("teebody.replays_withheld", "{replay}",
		"Retries refused a replay because the request was written on an HTTP/1 connection that failed, "+
			"and the upstream may have processed it.")
	m.overBudget = counter("teebody.over_budget_requests", "{request}",
		"Buffered requests whose buffering stopped because the shared budget was spent; "+
			"they went on without a replay, and most never needed one.")
	m.yields = counter("teebody.yields", "{body}",
		"Bodies that gave their share of the budget to smaller bodies and lost their replay.")
	m.responses = counter("teebody.error_responses", "{response}",
		"Answers written in place of the upstream's, by status code: "+
			"429 when a body could not be sent again, 502 for other upstream errors.")
	m.held = upDown("teebody.budget.held", "By", "Bytes of request bodies that the budget holds now.")
	peak, err := meter.Int64ObservableGauge("teebody.budget.held_peak", metric.WithUnit("By"),
		metric.WithDescription("Most bytes of request bodies that the budget has held at once."))
	errs = errors.Join(errs, err)
	m.peak = peak
	m.budget = upDown("teebody.budget.limit", "By", "Size of the budget in bytes; 0 when buffering is disabled.")
	m.traces = counter("teebody.adaptive_traces", "{trace}",
		"Traces of GOAWAY seen in adaptive mode: requests that failed for want of a replay, and replays served.")
	m.upstreams = upDown("teebody.adaptive_upstreams", "{upstream}", "Upstreams that adaptive mode buffers for now.")
	if errs != nil {
		return nil, errs
	}

	o := newObservation(attrs)
	return meter.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		o.observe(obs, &m, stats())
		return nil
	}, m.requests, m.buffered, m.bufferedQuiet, m.passed, m.served, m.refused, m.withheld, m.overBudget, m.yields,
		m.responses, m.held, m.peak, m.budget, m.traces, m.upstreams)
}

// instruments are the instruments of one RegisterMetrics call.
type instruments struct {
	requests, buffered, bufferedQuiet, passed metric.Int64ObservableCounter
	served, refused, withheld                 metric.Int64ObservableCounter
	overBudget, yields                        metric.Int64ObservableCounter
	responses, traces                         metric.Int64ObservableCounter
	held, budget, upstreams                   metric.Int64ObservableUpDownCounter
	peak                                      metric.Int64ObservableGauge
}

// observation holds the attribute sets of one RegisterMetrics call, made
// once so that a collection allocates none.
type observation struct {
	passReasons   []transport.PassThroughReason
	refuseReasons []teebody.Reason

	plain               []metric.ObserveOption
	passed, refused     [][]metric.ObserveOption // by the index in passReasons, refuseReasons
	tooMany, badGateway []metric.ObserveOption
}

func newObservation(attrs []attribute.KeyValue) *observation {
	with := func(kv ...attribute.KeyValue) []metric.ObserveOption {
		all := append(append([]attribute.KeyValue(nil), attrs...), kv...)
		return []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(all...))}
	}
	o := &observation{
		passReasons:   slices.Collect(transport.PassThroughReasons()),
		refuseReasons: slices.Collect(transport.RefusalReasons()),
		plain:         with(),
		tooMany:       with(StatusCodeKey.Int(http.StatusTooManyRequests)),
		badGateway:    with(StatusCodeKey.Int(http.StatusBadGateway)),
	}
	for _, r := range o.passReasons {
		o.passed = append(o.passed, with(ReasonKey.String(r.String())))
	}
	for _, r := range o.refuseReasons {
		o.refused = append(o.refused, with(ReasonKey.String(r.String())))
	}
	return o
}

// observe records s on m.
func (o *observation) observe(obs metric.Observer, m *instruments, s transport.Stats) {
	obs.ObserveInt64(m.requests, s.Requests, o.plain...)
	obs.ObserveInt64(m.buffered, s.Buffered, o.plain...)
	obs.ObserveInt64(m.bufferedQuiet, s.BufferedQuiet, o.plain...)
	for i, r := range o.passReasons {
		obs.ObserveInt64(m.passed, s.PassedThrough.Count(r), o.passed[i]...)
	}
	obs.ObserveInt64(m.served, s.ReplaysServed, o.plain...)
	for i, r := range o.refuseReasons {
		obs.ObserveInt64(m.refused, s.ReplaysRefused.Count(r), o.refused[i]...)
	}
	obs.ObserveInt64(m.withheld, s.ReplaysWithheld, o.plain...)
	obs.ObserveInt64(m.overBudget, s.BudgetRefusals, o.plain...)
	obs.ObserveInt64(m.yields, s.Yields, o.plain...)
	obs.ObserveInt64(m.responses, s.RetryLaterWritten, o.tooMany...)
	obs.ObserveInt64(m.responses, s.BadGatewayWritten, o.badGateway...)
	obs.ObserveInt64(m.held, s.BytesHeld, o.plain...)
	obs.ObserveInt64(m.peak, s.PeakBytesHeld, o.plain...)
	obs.ObserveInt64(m.budget, s.BudgetBytes, o.plain...)
	obs.ObserveInt64(m.traces, s.AdaptiveTraces, o.plain...)
	obs.ObserveInt64(m.upstreams, s.AdaptiveUpstreams, o.plain...)
}
