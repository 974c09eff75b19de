// Package otel exports what a teebody transport.Transport does to
// OpenTelemetry: its Stats as metrics, and each request's replays on the
// request's client span.
//
// It is a module of its own (github.com/teebody/teebody/contrib/otel), so
// that the library module stays free of OpenTelemetry:
//
//	import teebodyotel "github.com/teebody/teebody/contrib/otel"
//
//	tr := transport.New(inner, cfg)
//	reg, err := teebodyotel.RegisterMetrics(meterProvider, tr.Stats)
//	...
//	client := &http.Client{Transport: otelhttp.NewTransport(teebodyotel.NewTransport(tr))}
//
// RegisterMetrics reads Stats once per collection and keeps nothing between
// collections. Transport records, on the span that otelhttp's Transport
// starts around it, how many times the body was sent
// (http.request.resend_count), and each replay and refusal as an event at
// the time it happened.
//
// # Metrics
//
// The metrics export the fields of transport.Stats, with the meanings of the
// teebody_* metrics of contrib/prometheus, in OpenTelemetry's naming style.
// Counters are observable counters. The budget's bytes and
// teebody.adaptive_upstreams are observable up-down counters.
// teebody.budget.held_peak is an observable gauge.
//
//	teebody.requests                 {request}   teebody_requests_total
//	teebody.buffered_requests        {request}   teebody_buffered_requests_total
//	teebody.buffered_quiet_requests  {request}   teebody_buffered_quiet_requests_total
//	teebody.passed_through_requests  {request}   teebody_passed_through_requests_total, by teebody.reason
//	teebody.replays_served           {replay}    teebody_replays_served_total
//	teebody.replays_refused          {replay}    teebody_replays_refused_total, by teebody.reason
//	teebody.replays_withheld         {replay}    teebody_replays_withheld_total
//	teebody.over_budget_requests     {request}   teebody_over_budget_requests_total
//	teebody.yields                   {body}      teebody_yields_total
//	teebody.error_responses          {response}  teebody_error_responses_total, by http.response.status_code
//	teebody.budget.held              By          teebody_held_bytes
//	teebody.budget.held_peak         By          teebody_held_peak_bytes
//	teebody.budget.limit             By          teebody_budget_bytes
//	teebody.adaptive_traces          {trace}     teebody_adaptive_traces_total
//	teebody.adaptive_upstreams       {upstream}  teebody_adaptive_upstreams
//
// Alert on the rate of teebody.error_responses with status code 429. Each
// of those answers is a request that its client must send again. Only
// Transport.ErrorHandler and Transport.Responder count their answers.
package otel
