package proxy_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/teebody/teebody/cmd/demo/internal/load"
	"github.com/teebody/teebody/cmd/demo/internal/proxy"
	"github.com/teebody/teebody/cmd/demo/internal/testutil"
	"github.com/teebody/teebody/cmd/demo/internal/upstream"
	"github.com/teebody/teebody/pkg/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// chain starts an upstream at chance and a proxy in front of it.
func chain(t *testing.T, chance float64, noFix bool, cfg transport.Config) *proxy.Server {
	t.Helper()
	up := testutil.StartUpstream(t, upstream.Options{GoawayChance: chance})
	p, err := proxy.Start(proxy.ServerOptions{Options: proxy.Options{
		Upstream:  testutil.Target(t, up.Spec()).Config,
		NoFix:     noFix,
		Transport: cfg,
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Registered last, so it runs first: the proxy goes before its upstream.
	t.Cleanup(func() {
		if err := p.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return p
}

func TestForwardsWithUpstreamCredentials(t *testing.T) {
	p := chain(t, 0, false, transport.DefaultConfig())
	cs := testutil.Clientset(t, testutil.Target(t, p.Spec()).Config)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "through"}, Data: map[string]string{"k": strings.Repeat("v", 10000)}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "through", metav1.GetOptions{})
	if err != nil || got.Data["k"] != cm.Data["k"] {
		t.Fatalf("Get through the proxy: %v", err)
	}
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, "through", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	st, ok := p.Stats()
	if !ok || st.Buffered != 2 || st.PassedThrough.NoBody != 1 {
		t.Fatalf("stats = %+v, want 2 buffered (create, delete) and 1 without body (get)", st)
	}
	if st.BytesHeld != 0 {
		t.Fatalf("%d bytes still held after every request ended", st.BytesHeld)
	}
}

func TestUnauthorized(t *testing.T) {
	p := chain(t, 0, false, transport.DefaultConfig())
	hc := testutil.HTTPSClient(t, p.Spec().CAData)
	for _, auth := range []string{"", "Bearer wrong", "Bearer " + p.Spec().Token + "0", "Basic " + p.Spec().Token} {
		req, _ := http.NewRequest("GET", p.Spec().Server+"/api/v1/namespaces", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.ProtoMajor != 2 {
			t.Errorf("Authorization %q: %s %d, want HTTP/2 401", auth, resp.Proto, resp.StatusCode)
		}
	}
	if st, _ := p.Stats(); st.Requests != 0 {
		t.Fatalf("%d unauthorized requests reached the transport", st.Requests)
	}
}

func TestMetricsParse(t *testing.T) {
	p := chain(t, 0, false, transport.Config{TotalBytes: 1 << 20, PerRequestBytes: 1 << 10})
	if _, err := load.Run(context.Background(), testutil.Target(t, p.Spec()), load.Options{Workers: 2, OpsPerWorker: 3, QPS: -1}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", p.Spec().Server+"/metrics", nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := testutil.HTTPSClient(t, p.Spec().CAData).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	value := func(name string) float64 {
		f, ok := families[name]
		if !ok || len(f.Metric) == 0 {
			t.Fatalf("metric %s missing", name)
		}
		m := f.Metric[0]
		if m.Counter != nil {
			return m.Counter.GetValue()
		}
		return m.Gauge.GetValue()
	}
	// 6 operations of create and delete; setup adds its own requests.
	if v := value("teebody_buffered_requests_total"); v < 12 {
		t.Errorf("buffered = %v, want at least 12", v)
	}
	if v := value("teebody_budget_bytes"); v != 1<<20 {
		t.Errorf("budget = %v, want %v", v, 1<<20)
	}
	if v := value("teebody_bytes_held"); v != 0 {
		t.Errorf("bytes held = %v, want 0", v)
	}
	if f := families["teebody_replays_refused_total"]; f == nil || len(f.Metric) != 4 {
		t.Errorf("replays refused = %v, want 4 reasons", f)
	}
	if f := families["teebody_proxy_requests_total"]; f == nil {
		t.Error("proxy request counter missing")
	}
}

// TestGoawayShape is the demo's claim at small size: with GetBody gone and
// GOAWAYs frequent, the proxy without the fix fails requests with the GOAWAY
// in the error; with the fix it fails none; with a budget too small for the
// bodies it fails none either, answering 429 for client-go to retry.
func TestGoawayShape(t *testing.T) {
	opts := load.Options{Workers: 10, OpsPerWorker: 20, BodySize: 1024, QPS: -1, NoRetry: true}
	t.Run("no fix", func(t *testing.T) {
		p := chain(t, 0.25, true, transport.Config{})
		res, err := load.Run(context.Background(), testutil.Target(t, p.Spec()), opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.GoawayErrors == 0 {
			t.Fatalf("no GOAWAY failure without the fix: %+v", res)
		}
	})
	t.Run("fix", func(t *testing.T) {
		p := chain(t, 0.25, false, transport.DefaultConfig())
		res, err := load.Run(context.Background(), testutil.Target(t, p.Spec()), opts)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := p.Stats()
		if res.FailedOperations != 0 {
			t.Fatalf("%d failed with the fix: %q", res.FailedOperations, res.SampleErrors)
		}
		if st.ReplaysServed == 0 {
			t.Fatalf("no replay served: %+v", st)
		}
	})
	t.Run("small budget", func(t *testing.T) {
		p := chain(t, 0.25, false, transport.Config{TotalBytes: 256, PerRequestBytes: 256, RetryAfter: 1})
		small := opts
		small.NoRetry = false
		small.OpsPerWorker = 5
		res, err := load.Run(context.Background(), testutil.Target(t, p.Spec()), small)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := p.Stats()
		if res.FailedOperations != 0 {
			t.Fatalf("%d failed on the 429 path: %q", res.FailedOperations, res.SampleErrors)
		}
		if st.RetryLaterWritten == 0 {
			t.Fatalf("no 429 written: %+v", st)
		}
	})
}
