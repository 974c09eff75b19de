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
// (http.request.resend_count) and why a replay was refused.
package otel
