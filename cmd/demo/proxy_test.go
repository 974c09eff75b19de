package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/testutil"
	"github.com/teebody/teebody/pkg/transport"
)

func TestProxyEndToEnd(t *testing.T) {
	up := startServer(t, "upstream", "-goaway-chance", "0", "-goaway-after", "10")
	p := startServer(t, "proxy", "-kubeconfig", up.kubeconfig, "-total-bytes", "64MiB", "-per-request-bytes", "1MiB")
	contains(t, "proxy log", p.stderr.String(), "proxy listening", "total_bytes=67108864", "per_request_bytes=1048576")
	target, err := kubeconfig.Load(p.kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}

	// client-go through the proxy, GetBody cleared, a GOAWAY every 10 requests per connection: no failure.
	code, stdout, stderr := runCmd(t, "load", "-kubeconfig", p.kubeconfig, "-workers", "10", "-ops", "10", "-qps", "-1",
		"-no-retry", "-quiet")
	if code != exitOK {
		t.Fatalf("load through the proxy: exit %d: %s%s", code, stdout, stderr)
	}
	cs := testutil.Clientset(t, target.Config)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "seen"}, Data: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// 401 for a wrong token, forwarded for the right one.
	hc := testutil.HTTPSClient(t, target.Config.CAData)
	for token, want := range map[string]int{"": 401, "wrong": 401, target.Config.BearerToken: 200} {
		req, _ := http.NewRequest("GET", target.Config.Host+"/api/v1/namespaces/default/configmaps/seen", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		testutil.CheckHTTP2Status(t, hc, req, want, fmt.Sprintf("token %q", token))
	}

	// /metrics parses, and shows the replays.
	families := scrapeMetrics(t, p.kubeconfig)
	for _, name := range []string{"teebody_requests_total", "teebody_replays_served_total", "teebody_held_bytes",
		"teebody_held_peak_bytes", "teebody_passed_through_requests_total", "teebody_proxy_requests_total"} {
		if families[name] == nil {
			t.Errorf("metric %s missing", name)
		}
	}
	if v := metric(t, families, "teebody_buffered_requests_total", ""); v < 200 {
		t.Errorf("buffered requests = %v, want at least 200", v)
	}
	if v := metric(t, families, "teebody_budget_bytes", ""); v != 64<<20 {
		t.Errorf("budget = %v, want 64MiB", v)
	}

	if code := p.stop(); code != exitOK {
		t.Fatalf("proxy exit %d: %s", code, p.stderr.String())
	}
	contains(t, "proxy log", p.stderr.String(), "proxy shutting down", "proxy stopped", "bytes_held=0")
}

// TestProxyNoFix: "demo proxy -no-fix" forwards without the transport, so
// /metrics has none of its series.
func TestProxyNoFix(t *testing.T) {
	up := startServer(t, "upstream", "-goaway-chance", "0")
	p := startServer(t, "proxy", "-kubeconfig", up.kubeconfig, "-no-fix")
	contains(t, "proxy log", p.stderr.String(), "without the fix")
	code, stdout, stderr := runCmd(t, "load", "-kubeconfig", p.kubeconfig, "-workers", "2", "-ops", "3", "-qps", "-1", "-quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	families := scrapeMetrics(t, p.kubeconfig)
	if families["teebody_requests_total"] != nil || families["teebody_proxy_requests_total"] == nil {
		t.Errorf("metrics without the fix: teebody_requests_total %v, teebody_proxy_requests_total %v",
			families["teebody_requests_total"], families["teebody_proxy_requests_total"])
	}
}

func TestProxyBadEnvironment(t *testing.T) {
	for name, val := range map[string]string{
		transport.EnvPrefix + "TOTAL": "12XB", transport.EnvPrefix + "PER_REQ": "12XB", transport.EnvPrefix + "ADAPTIVE": "maybe",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, val)
			code, _, stderr := runCmd(t, "proxy", "-kubeconfig", "unused", "-write-kubeconfig", t.TempDir()+"/k")
			if code != exitUsage {
				t.Fatalf("exit %d, want 2", code)
			}
			contains(t, "stderr", stderr, "demo proxy: transport: "+name+": invalid ", `"`+val+`"`)
			if strings.Count(stderr, "\n") != 1 {
				t.Errorf("want one line, got %q", stderr)
			}
		})
	}
}

// TestProxyAdaptive: "demo proxy" in adaptive mode, from the environment or
// the flag (which wins); in front of an upstream without GOAWAYs it keeps
// every write, all below its floor, up to the floor, and /metrics shows it.
func TestProxyAdaptive(t *testing.T) {
	up := startServer(t, "upstream", "-goaway-chance", "0")
	t.Setenv(transport.EnvPrefix+"ADAPTIVE", "true")
	off := startServer(t, "proxy", "-kubeconfig", up.kubeconfig, "-adaptive=false")
	contains(t, "proxy log", off.stderr.String(), "adaptive=false")

	p := startServer(t, "proxy", "-kubeconfig", up.kubeconfig)
	contains(t, "proxy log", p.stderr.String(), "adaptive=true")
	code, stdout, stderr := runCmd(t, "load", "-kubeconfig", p.kubeconfig, "-workers", "10", "-ops", "20", "-qps", "-1", "-quiet")
	if code != exitOK {
		t.Fatalf("load through the adaptive proxy: exit %d: %s%s", code, stdout, stderr)
	}
	families := scrapeMetrics(t, p.kubeconfig)
	quiet := metric(t, families, "teebody_buffered_quiet_requests_total", "")
	traces := metric(t, families, "teebody_adaptive_traces_total", "")
	upstreams := metric(t, families, "teebody_adaptive_upstreams", "")
	buffered := metric(t, families, "teebody_buffered_requests_total", "")
	retryLater := metric(t, families, "teebody_error_responses_total", "429")
	// 20 x 10 operations of create and delete; the setup adds one write (the namespace).
	passed := metric(t, families, "teebody_passed_through_requests_total", "quiet")
	if quiet != 401 || buffered != 401 || passed != 0 || traces != 0 || upstreams != 0 || retryLater != 0 {
		t.Errorf("kept quiet %v, buffered %v, passed through %v, traces %v, upstreams %v, 429s %v; want 401, 401 and the rest 0",
			quiet, buffered, passed, traces, upstreams, retryLater)
	}
}

// scrapeMetrics fetches and parses the proxy's /metrics at host.
func scrapeMetrics(t *testing.T, kubeconfigPath string) map[string]*dto.MetricFamily {
	t.Helper()
	target, err := kubeconfig.Load(kubeconfigPath, "")
	if err != nil {
		t.Fatal(err)
	}
	hc := testutil.HTTPSClient(t, target.Config.CAData)
	resp, err := hc.Get(target.Config.Host + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return families
}

// metric is the value of the series of the metric name with that reason or
// code label ("" for a metric without labels) in families.
func metric(t *testing.T, families map[string]*dto.MetricFamily, name, label string) float64 {
	t.Helper()
	for _, m := range families[name].GetMetric() {
		got := ""
		for _, l := range m.Label {
			if l.GetName() == "reason" || l.GetName() == "code" {
				got = l.GetValue()
			}
		}
		if got == label {
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s with label %q", name, label)
	return 0
}
