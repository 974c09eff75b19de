package otel_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	teebodyotel "github.com/teebody/teebody/contrib/otel"
	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// Register the Transport's Stats on a MeterProvider; each collection reads
// Stats once. In a program, the provider's reader is an exporter's.
func ExampleRegisterMetrics() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	tr := transport.New(nil, transport.DefaultConfig())
	reg, err := teebodyotel.RegisterMetrics(mp, tr.Stats)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Unregister()

	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer upstream.Close()
	client := &http.Client{Transport: tr}
	defer client.CloseIdleConnections()
	for range 2 {
		resp, err := client.Post(upstream.URL, "text/plain", io.MultiReader(strings.NewReader("hello")))
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		log.Fatal(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch m.Name {
		case "teebody.requests", "teebody.buffered_requests", "teebody.replays_served":
			fmt.Printf("%s %d %s\n", m.Name, m.Data.(metricdata.Sum[int64]).DataPoints[0].Value, m.Unit)
		}
	}
	// Output:
	// teebody.requests 2 {request}
	// teebody.buffered_requests 2 {request}
	// teebody.replays_served 0 {replay}
}

// Put otelhttp's Transport outside teebodyotel's, so that the client span
// is in the context that teebodyotel's Transport sees. Here the upstream's
// first connection refuses the request with a graceful GOAWAY, so the body
// is sent twice, and the client span records one resend.
func ExampleNewTransport() {
	spans := tracetest.NewSpanRecorder() // in a program: an exporter's span processor
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())

	upstream := proxytest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}), proxytest.Options{RefuseEvery: math.MaxInt64})
	defer upstream.Close()
	tr := transport.New(upstream.Transport(), transport.DefaultConfig())
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: otelhttp.NewTransport(teebodyotel.NewTransport(tr), otelhttp.WithTracerProvider(tp))}

	// A proxy's inbound body has no GetBody, so the Transport buffers it.
	body := io.MultiReader(strings.NewReader(strings.Repeat("x", 100<<10)))
	resp, err := client.Post(upstream.URL, "text/plain", body)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close() // ends the client span

	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.SpanKind())
		for _, kv := range s.Attributes() {
			if kv.Key == teebodyotel.ResendCountKey || kv.Key == teebodyotel.BufferedKey {
				fmt.Printf("  %s=%s\n", kv.Key, kv.Value.String())
			}
		}
		for _, e := range s.Events() {
			fmt.Printf("  event %s %s=%s\n", e.Name, e.Attributes[0].Key, e.Attributes[0].Value.String())
		}
	}
	// Output:
	// HTTP POST client
	//   teebody.buffered=true
	//   http.request.resend_count=1
	//   event teebody.replay teebody.attempt=2
}
