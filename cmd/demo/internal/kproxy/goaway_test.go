package kproxy_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teebody/teebody/cmd/demo/internal/kproxy"
	"github.com/teebody/teebody/cmd/demo/internal/load"
	"github.com/teebody/teebody/cmd/demo/internal/testutil"
	"github.com/teebody/teebody/cmd/demo/internal/upstream"
	"github.com/teebody/teebody/pkg/transport"
)

// The side-by-side runs: a chance of GOAWAY high enough that a small load
// meets many, as the four-way demo's test does.
const (
	goawayChance = 0.15
	workers      = 10
	opsPerWorker = 15
	tries        = 3 // runs of a stage until it shows what it is about
)

// stage is one configuration of the proxy in front of the GOAWAY API.
type stage struct {
	name   string
	fix    *transport.Config // nil: the plain client-go transport
	stress bool              // the budget is too small: the 429 path
}

// stageRun is what one run of a stage showed.
type stageRun struct {
	res                    *load.Result
	retryLater, badGateway int64
	stats                  transport.Stats
}

func (r stageRun) String() string {
	return fmt.Sprintf("%d/%d operations failed, %d on a GOAWAY; responder: %d x 429, %d x 502; replays served %d, refused %+v",
		r.res.FailedOperations, r.res.TotalOperations, r.res.GoawayErrors, r.retryLater, r.badGateway,
		r.stats.ReplaysServed, r.stats.ReplaysRefused)
}

// runStage runs client-go's ConfigMap writes through UpgradeAwareHandler
// (wrapTransport as given) in front of up, configured as s says.
func runStage(t *testing.T, up *upstream.Upstream, s stage, wrapTransport bool) stageRun {
	t.Helper()
	inner, loc := upstreamTransport(t, testutil.Target(t, up.Spec()).Config)
	rt := inner
	var tr *transport.Transport
	if s.fix != nil {
		cfg := *s.fix
		cfg.ErrorLog = log.New(io.Discard, "", 0)
		tr = transport.New(inner, cfg)
		rt = tr
	}
	rs := &kproxy.Responder{RetryLater: s.fix != nil}
	spec := serveProxy(t, kproxy.New(kproxy.Options{Location: loc, Transport: rt, WrapTransport: wrapTransport, Responder: rs}))
	res, err := load.Run(context.Background(), testutil.Target(t, spec), load.Options{
		Name: s.name, Workers: workers, OpsPerWorker: opsPerWorker, BodySize: 1024, QPS: 5000, Burst: 5000,
		NoRetry: !s.stress, // client-go retries only the 429s
	})
	require.NoError(t, err)
	r := stageRun{res: res}
	r.retryLater, r.badGateway = rs.Counts()
	if tr != nil {
		r.stats = tr.Stats()
		assert.Zero(t, r.stats.BytesHeld, "bytes held after the run")
	}
	return r
}

// TestUpgradeAwareHandlerGOAWAY: client-go's writes through Kubernetes'
// proxy handler in front of the API server's GOAWAY filter fail with the
// plain transport and never with teebody's; with a spent budget the
// responder answers 429 and client-go's retries make every write succeed.
// Both with wrapTransport false and true (the aggregator's wiring, which
// flattens the transport's errors into strings).
func TestUpgradeAwareHandlerGOAWAY(t *testing.T) {
	up := testutil.StartUpstream(t, upstream.Options{GoawayChance: goawayChance})
	fix := transport.DefaultConfig()
	spent := transport.Config{TotalBytes: 256, PerRequestBytes: 256}
	for _, wrap := range []bool{false, true} {
		t.Run(fmt.Sprintf("wrapTransport=%v", wrap), func(t *testing.T) {
			t.Run("plain", func(t *testing.T) {
				var r stageRun
				for range tries {
					if r = runStage(t, up, stage{name: "plain"}, wrap); r.res.GoawayErrors > 0 {
						break
					}
				}
				t.Log(r)
				assert.NotZero(t, r.res.GoawayErrors, "no GOAWAY failure without the fix in %d runs: %q", tries, r.res.SampleErrors)
			})
			t.Run("teebody", func(t *testing.T) {
				r := runStage(t, up, stage{name: "teebody", fix: &fix}, wrap)
				t.Log(r)
				assert.Zero(t, r.res.FailedOperations, "failures with the fix: %q", r.res.SampleErrors)
				assert.Zero(t, r.retryLater+r.badGateway, "the responder answered with a budget to spare")
			})
			t.Run("spent budget", func(t *testing.T) {
				var r stageRun
				for i := range tries {
					r = runStage(t, up, stage{name: "spent budget", fix: &spent, stress: true}, wrap)
					t.Logf("run %d: %v", i+1, r)
					require.Zero(t, r.res.FailedOperations, "failures on the 429 path: %q", r.res.SampleErrors)
					require.Zero(t, r.badGateway, "the responder answered 502")
					if r.retryLater > 0 {
						break
					}
				}
				assert.NotZero(t, r.retryLater, "no 429 in %d runs: the budget was never missed", tries)
			})
		})
	}
}
