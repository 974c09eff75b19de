package load_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/load"
	"github.com/teebody/teebody/cmd/demo/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startUpstream runs the fake API server and returns its kubeconfig, loaded
// from a written file as "demo load" does.
func startUpstream(t *testing.T) kubeconfig.Target {
	t.Helper()
	u := testutil.StartUpstream(t, fakeapi.Options{})
	return testutil.Target(t, u.Spec())
}

func TestRunCounts(t *testing.T) {
	target := startUpstream(t)
	res, err := load.Run(context.Background(), target, load.Options{
		Name: "plain", Namespace: "counts", Workers: 3, OpsPerWorker: 7, BodySize: 2048, QPS: -1,
	})
	require.NoError(t, err)
	assert.Equal(t, [3]int{21, 21, 0}, [3]int{res.TotalOperations, res.SuccessfulOperations, res.FailedOperations}, "total, ok, failed")
	assert.Equal(t, fakeapi.GitVersion, res.ServerVersion)
	assert.Equal(t, target.Config.Host, res.APIServerURL)
	assert.Equal(t, "teebody-upstream", res.Context)
	assert.True(t, res.P50Ms > 0 && res.P50Ms <= res.P95Ms && res.P95Ms <= res.P99Ms, "percentiles out of order: %v %v %v", res.P50Ms, res.P95Ms, res.P99Ms)
	assert.Equal(t, "plain", res.Name)
	assert.Equal(t, [2]int{3, 7}, [2]int{res.Workers, res.OpsPerWorker}, "workers, ops per worker")
	assert.False(t, res.End.Before(res.Start), "ends before it starts: %v, %v", res.Start, res.End)
	// Every operation deletes what it created, in the namespace it created.
	cs := testutil.Clientset(t, target.Config)
	list, err := cs.CoreV1().ConfigMaps("counts").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, list.Items, "left behind")
}

// TestNoRetryClearsGetBody: with NoRetry the operations' requests reach
// the transport without GetBody, so that Go's transport cannot replay a
// body after a GOAWAY, as a proxy cannot; without it they keep client-go's.
// The setup's requests keep it either way.
func TestNoRetryClearsGetBody(t *testing.T) {
	for _, noRetry := range []bool{false, true} {
		target := startUpstream(t)
		var withGetBody, without atomic.Int32
		target.Config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(req *http.Request) (*http.Response, error) {
				if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/configmaps") {
					if req.GetBody != nil {
						withGetBody.Add(1)
					} else {
						without.Add(1)
					}
				}
				return rt.RoundTrip(req)
			})
		})
		res, err := load.Run(context.Background(), target, load.Options{Workers: 2, OpsPerWorker: 3, QPS: -1, NoRetry: noRetry})
		require.NoError(t, err)
		require.Zero(t, res.FailedOperations, "%q", res.SampleErrors)
		want := [2]int32{6, 0}
		if noRetry {
			want = [2]int32{0, 6}
		}
		assert.Equal(t, want, [2]int32{withGetBody.Load(), without.Load()}, "NoRetry %v: creates with GetBody, without", noRetry)
	}
}

func TestOptionsRefused(t *testing.T) {
	target := startUpstream(t)
	for _, opts := range []load.Options{
		{Workers: 0, OpsPerWorker: 1},
		{Workers: 1, OpsPerWorker: 0},
		{Workers: 1, OpsPerWorker: 1, BodySize: -1},
		{Workers: 1, OpsPerWorker: 1, BodySize: 2 << 20},
		{Workers: 1, OpsPerWorker: 1, Burst: -1},
	} {
		_, err := load.Run(context.Background(), target, opts)
		assert.ErrorIs(t, err, load.ErrOptions, "%+v", opts)
	}
}

func TestSetupFails(t *testing.T) {
	target := startUpstream(t)
	target.Config.BearerToken = "wrong"
	_, err := load.Run(context.Background(), target, load.Options{Workers: 1, OpsPerWorker: 1})
	assert.ErrorIs(t, err, load.ErrSetup)
}

func TestCanceledRunStops(t *testing.T) {
	target := startUpstream(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// End the run from inside, after a few operations went through.
	var posts atomic.Int32
	target.Config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPost && posts.Add(1) == 5 {
				cancel()
			}
			return rt.RoundTrip(req)
		})
	})
	res, err := load.Run(ctx, target, load.Options{Workers: 2, OpsPerWorker: 1000, QPS: -1})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, res, "no partial result")
	assert.Less(t, res.TotalOperations, 2000)
	assert.GreaterOrEqual(t, res.TotalOperations, 3)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func TestProgressPlain(t *testing.T) {
	target := startUpstream(t)
	var out strings.Builder
	_, err := load.Run(context.Background(), target, load.Options{
		Name: "p", Workers: 2, OpsPerWorker: 5, QPS: -1, Progress: &out,
	})
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.True(t, strings.HasPrefix(lines[len(lines)-1], "p: 10/10 operations (100%), 0 failed"), "progress = %q", out.String())
	assert.NotContains(t, out.String(), "\r", "plain progress rewrites a line")
}
