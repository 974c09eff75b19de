package load_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/load"
	"github.com/teebody/teebody/cmd/demo/internal/testutil"
	"github.com/teebody/teebody/cmd/demo/internal/upstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startUpstream runs the fake API server and returns its kubeconfig, loaded
// from a written file as "demo load" does.
func startUpstream(t *testing.T, chance float64) kubeconfig.Target {
	t.Helper()
	u := testutil.StartUpstream(t, upstream.Options{GoawayChance: chance})
	return testutil.Target(t, u.Spec())
}

func TestRunCounts(t *testing.T) {
	target := startUpstream(t, 0)
	res, err := load.Run(context.Background(), target, load.Options{
		Name: "plain", Namespace: "counts", Workers: 3, OpsPerWorker: 7, BodySize: 2048, QPS: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalOperations != 21 || res.SuccessfulOperations != 21 || res.FailedOperations != 0 {
		t.Fatalf("counts = %d total, %d ok, %d failed; want 21, 21, 0", res.TotalOperations, res.SuccessfulOperations, res.FailedOperations)
	}
	if res.ServerVersion != fakeapi.GitVersion || res.APIServerURL != target.Config.Host || res.Context != "teebody-upstream" {
		t.Fatalf("identity = %q %q %q", res.ServerVersion, res.APIServerURL, res.Context)
	}
	if !(res.P50Ms > 0 && res.P50Ms <= res.P95Ms && res.P95Ms <= res.P99Ms) {
		t.Fatalf("percentiles out of order: %v %v %v", res.P50Ms, res.P95Ms, res.P99Ms)
	}
	if res.Workers != 3 || res.OpsPerWorker != 7 || res.Name != "plain" || res.End.Before(res.Start) {
		t.Fatalf("result header wrong: %+v", res)
	}
	// Every operation deletes what it created, in the namespace it created.
	cs := testutil.Clientset(t, target.Config)
	list, err := cs.CoreV1().ConfigMaps("counts").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Fatalf("left behind: %v, %v", list, err)
	}
}

// TestNoRetryShowsGoaway: without GetBody, a request refused by a GOAWAY
// after its body was written fails, and is counted as a GOAWAY failure.
// The chance is high and the workers many, so that requests overlap on a
// connection when its GOAWAY arrives, as in the embedded run.
func TestNoRetryShowsGoaway(t *testing.T) {
	target := startUpstream(t, 0.25)
	res, err := load.Run(context.Background(), target, load.Options{
		Workers: 10, OpsPerWorker: 30, BodySize: 1024, QPS: -1, NoRetry: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.GoawayErrors == 0 || res.GoawayErrors > res.FailedOperations {
		t.Fatalf("GOAWAY errors = %d of %d failed; want some", res.GoawayErrors, res.FailedOperations)
	}
	if len(res.SampleErrors) == 0 || len(res.SampleErrors) > 10 {
		t.Fatalf("%d sample errors, want 1 to 10", len(res.SampleErrors))
	}
	found := false
	for _, s := range res.SampleErrors {
		found = found || strings.Contains(s, "define Request.GetBody to avoid this error") ||
			strings.Contains(s, "net/http: cannot rewind body after connection loss")
	}
	if !found {
		t.Fatalf("no sample is one of Go's errors for a body it cannot send again: %q", res.SampleErrors)
	}
	if res.TotalOperations != 300 || res.SuccessfulOperations+res.FailedOperations != 300 {
		t.Fatalf("counts = %+v", res)
	}
}

// TestRetryHidesGoaway: the same load with client-go's GetBody kept
// survives every GOAWAY: Go's transport replays the body.
func TestRetryHidesGoaway(t *testing.T) {
	target := startUpstream(t, 0.25)
	res, err := load.Run(context.Background(), target, load.Options{
		Workers: 10, OpsPerWorker: 30, BodySize: 1024, QPS: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.FailedOperations != 0 {
		t.Fatalf("%d failed: %q", res.FailedOperations, res.SampleErrors)
	}
}

func TestOptionsRefused(t *testing.T) {
	target := startUpstream(t, 0)
	for _, opts := range []load.Options{
		{Workers: 0, OpsPerWorker: 1},
		{Workers: 1, OpsPerWorker: 0},
		{Workers: 1, OpsPerWorker: 1, BodySize: -1},
		{Workers: 1, OpsPerWorker: 1, BodySize: 2 << 20},
		{Workers: 1, OpsPerWorker: 1, Burst: -1},
	} {
		if _, err := load.Run(context.Background(), target, opts); !errors.Is(err, load.ErrOptions) {
			t.Errorf("%+v: err = %v, want ErrOptions", opts, err)
		}
	}
}

func TestSetupFails(t *testing.T) {
	target := startUpstream(t, 0)
	target.Config.BearerToken = "wrong"
	_, err := load.Run(context.Background(), target, load.Options{Workers: 1, OpsPerWorker: 1})
	if !errors.Is(err, load.ErrSetup) {
		t.Fatalf("err = %v, want ErrSetup", err)
	}
}

func TestCanceledRunStops(t *testing.T) {
	target := startUpstream(t, 0)
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
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res == nil || res.TotalOperations >= 2000 || res.TotalOperations < 3 {
		t.Fatalf("result = %+v, want a partial one", res)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func TestProgressPlain(t *testing.T) {
	target := startUpstream(t, 0)
	var out strings.Builder
	_, err := load.Run(context.Background(), target, load.Options{
		Name: "p", Workers: 2, OpsPerWorker: 5, QPS: -1, Progress: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "p: 10/10 operations (100%), 0 failed") || strings.Contains(out.String(), "\r") {
		t.Fatalf("progress = %q", out.String())
	}
}
