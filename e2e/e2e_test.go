//go:build unix

package e2e

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
)

// envRun is the variable that turns the suite on; make e2e sets it after build.sh.
const envRun = "TEEBODY_E2E"

// config is the load the suite runs; the defaults are the original experiment's.
type config struct {
	workers, ops, bodySize int
	qps                    int // the asserted runs: a rate at which GOAWAY failures show in every run
	recordQPS              int // the original's rate, run once for the record and not asserted (0: skip)
	probes                 int // GETs that probe the API server's GOAWAY filter
	out                    string
}

var cfg = config{}

func init() {
	flag.IntVar(&cfg.workers, "workers", 10, "load workers")
	flag.IntVar(&cfg.ops, "ops", 100, "operations per worker")
	flag.IntVar(&cfg.bodySize, "body-size", 1024, "ConfigMap payload in bytes")
	flag.IntVar(&cfg.qps, "qps", 2000, "client QPS of the asserted runs")
	flag.IntVar(&cfg.recordQPS, "record-qps", 100, "client QPS of the direct run kept for the record only (0: skip it)")
	flag.IntVar(&cfg.probes, "probes", 1000, "sequential GETs that measure the API server's GOAWAY rate")
	flag.StringVar(&cfg.out, "out", "", "folder for the logs, result JSON files and table.md (default: a temporary folder)")
}

// TestE2E starts etcd and kube-apiserver --goaway-chance=0.02, checks that the GOAWAY filter is on, and runs the
// original experiment's load against it directly and through `demo proxy` in each mode.
//
// Subtests run in order and each needs the ones before it only for the cluster: -run 'TestE2E/goaway-injector'
// checks the servers alone.
func TestE2E(t *testing.T) {
	if os.Getenv(envRun) != "1" {
		t.Skipf("the end-to-end suite runs a real kube-apiserver and etcd: run `make e2e` (or ./build.sh, then %s=1 go test -run TestE2E -v -timeout 30m .) to run it", envRun)
	}
	start := time.Now()
	dir := outDir(t, "")

	// The demo builds while the cluster starts: neither needs the other. The cleanup waits for the build when
	// the start-up fails first (the test's context has ended by then, which stops it).
	var (
		build errgroup.Group
		demo  string
	)
	build.Go(func() (err error) {
		demo, err = buildDemo(t.Context(), dir)
		if err == nil {
			t.Logf("built %s in %v", demo, time.Since(start).Round(time.Second))
		}
		return err
	})
	t.Cleanup(func() { _ = build.Wait() })

	c := startCluster(t, dir)
	t.Logf("cluster up in %v", time.Since(start).Round(time.Second))

	t.Run("goaway-injector", func(t *testing.T) {
		c.checkGoawayFlag(t)
		goaways := c.probeGoaways(t, cfg.probes)
		t.Logf("%d sequential GETs over one HTTP/2 client: %d answered with a GOAWAY (chance %s)", cfg.probes, goaways, goawayChance)
		// At n = 1000 and p = 0.02 the count is Binomial with mean 20 and deviation 4.4: fewer than 5 has a
		// chance near 1e-5, so a count that low means the filter is off or weaker than the flag says.
		if low := int64(cfg.probes) / 200; goaways < low {
			t.Fatalf("only %d of %d requests got a GOAWAY, want at least %d: the API server's GOAWAY injector looks off", goaways, cfg.probes, low)
		}
	})
	if t.Failed() {
		return
	}

	demoBin := func(t *testing.T) string {
		t.Helper()
		if err := build.Wait(); err != nil {
			t.Fatal(err)
		}
		return demo
	}
	var files []string
	record := func(r result) { files = append(files, filepath.Join(dir, r.Name+".json")) }

	// Each run has its own namespace (demo load creates it), so no run sees another's ConfigMaps.
	run := func(t *testing.T, name, kubeconfig string, qps int, noRetry bool) result {
		r := runLoad(t, demoBin(t), dir, cfg, loadRun{name: name, kubeconfig: kubeconfig, qps: qps, noRetry: noRetry})
		record(r)
		return r
	}
	wantGoawayFailures := func(t *testing.T, r result) {
		t.Helper()
		if r.FailedOperations == 0 || r.GoawayErrors == 0 {
			t.Errorf("%v: want GOAWAY failures at QPS %d and --goaway-chance=%s; none means the injector looks off "+
				"(or the load no longer overlaps requests on a connection)", r, cfg.qps, goawayChance)
		}
	}
	wantNoFailures := func(t *testing.T, r result) {
		t.Helper()
		if r.FailedOperations != 0 {
			t.Errorf("%v: want 0 failed operations; samples: %q", r, r.SampleErrors)
		}
	}

	t.Run("direct", func(t *testing.T) {
		r := run(t, fmt.Sprintf("direct-no-retry-qps%d", cfg.qps), c.kubeconfig, cfg.qps, true)
		wantGoawayFailures(t, r)
	})
	t.Run("proxy-no-fix", func(t *testing.T) {
		p := startProxy(t, demoBin(t), dir, "no-fix", c.kubeconfig, "-no-fix")
		r := run(t, fmt.Sprintf("proxy-no-fix-qps%d", cfg.qps), p.kubeconfig, cfg.qps, true)
		p.shutdown(t)
		wantGoawayFailures(t, r)
	})
	t.Run("proxy-fixed", func(t *testing.T) {
		p := startProxy(t, demoBin(t), dir, "fixed", c.kubeconfig)
		r := run(t, fmt.Sprintf("proxy-fixed-qps%d", cfg.qps), p.kubeconfig, cfg.qps, true)
		m := p.metrics(t)
		p.shutdown(t)
		wantNoFailures(t, r)
		logMetrics(t, m)
		// The fix must have been what saved the GOAWAY'd requests, not a quiet run.
		wantMetric(t, m, "teebody_replays_served_total", func(v float64) bool { return v > 0 }, "> 0")
		wantMetric(t, m, `teebody_error_responses_total{code="429"}`, func(v float64) bool { return v == 0 }, "0")
	})
	t.Run("proxy-429", func(t *testing.T) {
		// A budget smaller than one ConfigMap's body: a create cannot be kept, so a GOAWAY'd create gets the
		// proxy's 429 with Retry-After instead of a replay, and client-go's own retries (no -no-retry) carry it
		// through.
		p := startProxy(t, demoBin(t), dir, "429", c.kubeconfig, "-total-bytes", "512")
		r := run(t, fmt.Sprintf("proxy-429-path-qps%d", cfg.qps), p.kubeconfig, cfg.qps, false)
		m := p.metrics(t)
		p.shutdown(t)
		wantNoFailures(t, r)
		logMetrics(t, m)
		// The path was taken: replays were refused and answered with 429s. (Small bodies, such as a delete's
		// options, still fit the budget and may be replayed.)
		wantMetric(t, m, "teebody_replays_refused_total", func(v float64) bool { return v > 0 }, "> 0")
		wantMetric(t, m, `teebody_error_responses_total{code="429"}`, func(v float64) bool { return v > 0 }, "> 0")
	})
	t.Run("proxy-adaptive", func(t *testing.T) {
		// Adaptive mode, with client-go's normal retries: until the upstream's first trace of GOAWAY its 1 KiB
		// bodies are kept up to the adaptive floor (64 KiB), so the first GOAWAY costs them nothing: their
		// replays are served, and those replays are the trace from which on every request is buffered, as
		// always-on does. No request passes through, and none is answered 429.
		p := startProxy(t, demoBin(t), dir, "adaptive", c.kubeconfig, "-adaptive")
		r := run(t, fmt.Sprintf("proxy-adaptive-qps%d", cfg.qps), p.kubeconfig, cfg.qps, false)
		m := p.metrics(t)
		p.shutdown(t)
		wantNoFailures(t, r)
		logMetrics(t, m)
		wantMetric(t, m, `teebody_error_responses_total{code="429"}`, func(v float64) bool { return v == 0 }, "0")
		wantMetric(t, m, `teebody_passed_through_requests_total{reason="quiet"}`, func(v float64) bool { return v == 0 }, "0")
		// Kept under the floor at first, fully buffered after the first trace, replays served from both.
		wantMetric(t, m, "teebody_buffered_quiet_requests_total", func(v float64) bool { return v > 0 }, "> 0")
		wantMetric(t, m, "teebody_adaptive_traces_total", func(v float64) bool { return v > 0 }, "> 0")
		wantMetric(t, m, "teebody_buffered_requests_total", func(v float64) bool { return v > 0 }, "> 0")
		wantMetric(t, m, "teebody_replays_served_total", func(v float64) bool { return v > 0 }, "> 0")
		wantMetric(t, m, "teebody_adaptive_upstreams", func(v float64) bool { return v == 1 }, "1")
	})
	t.Run("teleport-chain", func(t *testing.T) {
		// Teleport's agent's upstream chain (demo proxy -chain teleport, docs/teleport.md): x/net's
		// http2.ConfigureTransport, SetTransportDefaults, then client-go's wrappers with an impersonation
		// config and an instrumentation wrapper on top; the teebody transport innermost, or not at all.
		// Without it the experiment must fail, or it proves nothing; with it nothing may fail, and the
		// replays must be what saved the GOAWAY'd writes.
		plain := startProxy(t, demoBin(t), dir, "teleport-no-fix", c.kubeconfig, "-chain", "teleport", "-no-fix")
		wantImpersonated(t, plain)
		r := run(t, fmt.Sprintf("teleport-chain-no-fix-qps%d", cfg.qps), plain.kubeconfig, cfg.qps, true)
		plain.shutdown(t)
		wantGoawayFailures(t, r)

		p := startProxy(t, demoBin(t), dir, "teleport", c.kubeconfig, "-chain", "teleport")
		wantImpersonated(t, p)
		r = run(t, fmt.Sprintf("teleport-chain-fixed-qps%d", cfg.qps), p.kubeconfig, cfg.qps, true)
		m := p.metrics(t)
		p.shutdown(t)
		wantNoFailures(t, r)
		logMetrics(t, m)
		wantMetric(t, m, "teebody_replays_served_total", func(v float64) bool { return v > 0 }, "> 0")
		wantMetric(t, m, `teebody_error_responses_total{code="429"}`, func(v float64) bool { return v == 0 }, "0")
	})
	if cfg.recordQPS > 0 {
		t.Run("record", func(t *testing.T) {
			// The original experiment's rate: GOAWAY failures are rare and noisy here (0 to 14 per 1,000 in the runs recorded in docs/E2E.md), so
			// this run is kept for the table only.
			run(t, fmt.Sprintf("direct-no-retry-qps%d", cfg.recordQPS), c.kubeconfig, cfg.recordQPS, true)
		})
	}

	if len(files) > 0 && build.Wait() == nil {
		table := compare(t, demo, files)
		fmt.Printf("\n%s\n", table)
		writeFile(t, filepath.Join(dir, "table.md"), []byte(table))
	}
	t.Logf("end-to-end suite took %v", time.Since(start).Round(time.Second))
}

// wantMetric checks the sum of a proxy metric's samples.
func wantMetric(t *testing.T, m map[string]float64, name string, ok func(float64) bool, want string) {
	t.Helper()
	v, found := sumMetric(m, name)
	if !found {
		t.Errorf("the proxy's /metrics has no %s", name)
	} else if !ok(v) {
		t.Errorf("proxy metric %s = %v, want %s", name, v, want)
	}
}

// logMetrics logs the proxy's teebody metrics, the evidence of what the fix did.
func logMetrics(t *testing.T, m map[string]float64) {
	t.Helper()
	names := slices.Sorted(maps.Keys(m))
	for _, name := range names {
		if strings.HasPrefix(name, "teebody_") {
			t.Logf("proxy metric %s = %v", name, m[name])
		}
	}
}
