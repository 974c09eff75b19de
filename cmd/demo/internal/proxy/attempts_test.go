package proxy_test

import (
	"context"
	"encoding/pem"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/proxy"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
	"github.com/teebody/teebody/cmd/demo/internal/testutil"
	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// TestAttemptsCountsReplays: the upstream's first connection refuses the
// proxy's first request, a create, with a GOAWAY once its body started, so
// its body is sent twice; a get after it has no body. Attempts adds up their
// Reports: one request needed a replay, and it took two attempts.
func TestAttemptsCountsReplays(t *testing.T) {
	up := proxytest.NewServer(fakeapi.New(fakeapi.Options{}), proxytest.Options{RefuseEvery: math.MaxInt64})
	t.Cleanup(up.Close)
	spec := kubeconfig.Spec{Name: "refusing", Server: up.URL,
		CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: up.Certificate().Raw})}
	p, err := proxy.Start(proxy.Options{Upstream: testutil.Target(t, spec).Config, Transport: transport.DefaultConfig()}, "", serve.Pair{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Shutdown(context.Background())) })

	cs := testutil.Clientset(t, testutil.Target(t, p.Spec()).Config)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "replayed"}, Data: map[string]string{"k": "v"}}
	_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().ConfigMaps("default").Get(ctx, "replayed", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(1), up.Goaways(), "the create did not meet the refusal")

	a, ok := p.Attempts()
	require.True(t, ok, "no Attempts with the fix")
	assert.Equal(t, proxy.Attempts{Replayed: 1, Most: 2}, a)
}

// TestAttemptsNoFix: without the fix there is no Report to add up.
func TestAttemptsNoFix(t *testing.T) {
	up := testutil.StartUpstream(t, fakeapi.Options{})
	p, err := proxy.New(proxy.Options{Upstream: testutil.Target(t, up.Spec()).Config, Token: "t", NoFix: true})
	require.NoError(t, err)
	a, ok := p.Attempts()
	assert.False(t, ok)
	assert.Zero(t, a)
}
