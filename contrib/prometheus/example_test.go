package prometheus_test

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	teebodyprom "github.com/teebody/teebody/contrib/prometheus"
	"github.com/teebody/teebody/pkg/transport"
)

// Register a Collector over the Transport's Stats and serve the registry;
// each scrape reads Stats once.
func ExampleNewCollector() {
	tr := transport.New(nil, transport.DefaultConfig())
	reg := prometheus.NewRegistry()
	reg.MustRegister(teebodyprom.NewCollector(tr.Stats))
	metrics := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})) // in a program: mux.Handle("/metrics", ...)
	defer metrics.Close()

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

	resp, err := http.Get(metrics.URL)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		if line := sc.Text(); strings.HasPrefix(line, "teebody_requests_total") ||
			strings.HasPrefix(line, "teebody_buffered_requests_total") ||
			strings.HasPrefix(line, "teebody_replays_refused_total") {
			fmt.Println(line)
		}
	}
	// Output:
	// teebody_buffered_requests_total 2
	// teebody_replays_refused_total{reason="closed"} 0
	// teebody_replays_refused_total{reason="no_budget"} 0
	// teebody_replays_refused_total{reason="streamed_past"} 0
	// teebody_replays_refused_total{reason="too_large"} 0
	// teebody_replays_refused_total{reason="yielded"} 0
	// teebody_requests_total 2
}
