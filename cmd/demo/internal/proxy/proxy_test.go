package proxy_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err)
	// Registered last, so it runs first: the proxy goes before its upstream.
	t.Cleanup(func() { assert.NoError(t, p.Shutdown(context.Background())) })
	return p
}

func TestForwardsWithUpstreamCredentials(t *testing.T) {
	p := chain(t, 0, false, transport.DefaultConfig())
	cs := testutil.Clientset(t, testutil.Target(t, p.Spec()).Config)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "through"}, Data: map[string]string{"k": strings.Repeat("v", 10000)}}
	_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "through", metav1.GetOptions{})
	require.NoError(t, err, "Get through the proxy")
	assert.Equal(t, cm.Data, got.Data)
	require.NoError(t, cs.CoreV1().ConfigMaps("default").Delete(ctx, "through", metav1.DeleteOptions{}))
	st, ok := p.Stats()
	require.True(t, ok, "no Stats with the fix")
	assert.Equal(t, int64(2), st.Buffered, "buffered: create, delete")
	assert.Equal(t, int64(1), st.PassedThrough.NoBody, "without a body: get")
	assert.Zero(t, st.BytesHeld, "bytes still held after every request ended")
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
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "Authorization %q", auth)
		assert.Equal(t, 2, resp.ProtoMajor, "Authorization %q: %s", auth, resp.Proto)
	}
	st, _ := p.Stats()
	assert.Zero(t, st.Requests, "unauthorized requests reached the transport")
}

func TestMetricsParse(t *testing.T) {
	p := chain(t, 0, false, transport.Config{TotalBytes: 1 << 20, PerRequestBytes: 1 << 10})
	_, err := load.Run(context.Background(), testutil.Target(t, p.Spec()), load.Options{Workers: 2, OpsPerWorker: 3, QPS: -1})
	require.NoError(t, err)
	req, _ := http.NewRequest("GET", p.Spec().Server+"/metrics", nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := testutil.HTTPSClient(t, p.Spec().CAData).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	value := func(name string) float64 {
		f, ok := families[name]
		require.True(t, ok && len(f.Metric) > 0, "metric %s missing", name)
		m := f.Metric[0]
		if m.Counter != nil {
			return m.Counter.GetValue()
		}
		return m.Gauge.GetValue()
	}
	// 6 operations of create and delete; setup adds its own requests.
	assert.GreaterOrEqual(t, value("teebody_buffered_requests_total"), 12.0, "buffered")
	assert.Equal(t, float64(1<<20), value("teebody_budget_bytes"), "budget")
	assert.Zero(t, value("teebody_bytes_held"), "bytes held")
	if f := families["teebody_replays_refused_total"]; assert.NotNil(t, f, "replays refused") {
		assert.Len(t, f.Metric, 4, "replays refused: one per reason")
	}
	assert.Contains(t, families, "teebody_proxy_requests_total")
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
		require.NoError(t, err)
		assert.NotZero(t, res.GoawayErrors, "no GOAWAY failure without the fix: %+v", res)
	})
	t.Run("fix", func(t *testing.T) {
		p := chain(t, 0.25, false, transport.DefaultConfig())
		res, err := load.Run(context.Background(), testutil.Target(t, p.Spec()), opts)
		require.NoError(t, err)
		st, _ := p.Stats()
		assert.Zero(t, res.FailedOperations, "failed with the fix: %q", res.SampleErrors)
		assert.NotZero(t, st.ReplaysServed, "no replay served: %+v", st)
	})
	t.Run("small budget", func(t *testing.T) {
		p := chain(t, 0.25, false, transport.Config{TotalBytes: 256, PerRequestBytes: 256, RetryAfter: 1})
		small := opts
		small.NoRetry = false
		small.OpsPerWorker = 5
		res, err := load.Run(context.Background(), testutil.Target(t, p.Spec()), small)
		require.NoError(t, err)
		st, _ := p.Stats()
		assert.Zero(t, res.FailedOperations, "failed on the 429 path: %q", res.SampleErrors)
		assert.NotZero(t, st.RetryLaterWritten, "no 429 written: %+v", st)
	})
}
