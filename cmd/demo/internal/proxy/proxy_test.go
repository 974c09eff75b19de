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

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/cmd/demo/internal/load"
	"github.com/teebody/teebody/cmd/demo/internal/proxy"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
	"github.com/teebody/teebody/cmd/demo/internal/testutil"
	"github.com/teebody/teebody/pkg/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// chain starts an upstream without GOAWAYs and a proxy in front of it.
func chain(t *testing.T, cfg transport.Config) *proxy.Server {
	t.Helper()
	up := testutil.StartUpstream(t, fakeapi.Options{})
	p, err := proxy.Start(proxy.Options{Upstream: testutil.Target(t, up.Spec()).Config, Transport: cfg}, "", serve.Pair{})
	require.NoError(t, err)
	// Registered last, so it runs first: the proxy goes before its upstream.
	t.Cleanup(func() { assert.NoError(t, p.Shutdown(context.Background())) })
	return p
}

func TestForwardsWithUpstreamCredentials(t *testing.T) {
	p := chain(t, transport.DefaultConfig())
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
	p := chain(t, transport.DefaultConfig())
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
	p := chain(t, transport.Config{TotalBytes: 1 << 20, PerRequestBytes: 1 << 10})
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
	assert.Zero(t, value("teebody_held_bytes"), "bytes held")
	if f := families["teebody_replays_refused_total"]; assert.NotNil(t, f, "replays refused") {
		assert.Len(t, f.Metric, 5, "replays refused: one per reason")
	}
	if f := families["teebody_error_responses_total"]; assert.NotNil(t, f, "error responses") {
		assert.Len(t, f.Metric, 2, "error responses: one per code")
	}
	assert.Contains(t, families, "teebody_proxy_requests_total")
}

// TestTeleportChainForwards: with Chain teleport the proxy forwards writes through Teleport's chain with the
// teebody transport in it, and gives everything back once they are over.
func TestTeleportChainForwards(t *testing.T) {
	up := testutil.StartUpstream(t, fakeapi.Options{})
	p, err := proxy.Start(proxy.Options{Upstream: testutil.Target(t, up.Spec()).Config, Transport: transport.DefaultConfig(),
		Chain: proxy.ChainTeleport}, "", serve.Pair{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Shutdown(context.Background())) })
	cs := testutil.Clientset(t, testutil.Target(t, p.Spec()).Config)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "teleport"}, Data: map[string]string{"k": "v"}}
	_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "teleport", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, cm.Data, got.Data)
	st, ok := p.Stats()
	require.True(t, ok, "no Stats with the fix")
	assert.Equal(t, int64(1), st.Buffered, "the create")
	assert.Zero(t, st.BytesHeld)
}

func TestUnknownChain(t *testing.T) {
	up := testutil.StartUpstream(t, fakeapi.Options{})
	_, err := proxy.New(proxy.Options{Upstream: testutil.Target(t, up.Spec()).Config, Token: "t", Chain: "nope"})
	assert.ErrorIs(t, err, proxy.ErrUpstream)
}
