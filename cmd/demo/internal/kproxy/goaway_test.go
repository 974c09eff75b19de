package kproxy_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/cmd/demo/internal/load"
	"github.com/teebody/teebody/cmd/demo/internal/testutil"
	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// TestUpgradeAwareHandlerGOAWAY: client-go's ConfigMap writes (GetBody
// cleared, as through any proxy) through Kubernetes' proxy handler with the
// teebody transport never fail and leave nothing held, in front of the
// embedded API served, for each case, by a proxytest.Server of its own that
// ends a connection with a GOAWAY after every 10th response and refuses with
// a GOAWAY every stream of one connection in three (the first among them)
// once its body started, so that some write meets a GOAWAY on every run;
// with a spent budget the responder answers 429, never 502, and client-go's
// retries make every write succeed. Both with wrapTransport false and true
// (the aggregator's wiring, which flattens the transport's errors into
// strings, so that only ShouldRetryLater's text match finds them). That the
// same writes fail without the fix is TestFiveWay's to show.
func TestUpgradeAwareHandlerGOAWAY(t *testing.T) {
	for _, wrap := range []bool{false, true} {
		for _, tc := range []struct {
			name  string
			cfg   transport.Config
			spent bool // the budget is too small for the bodies: the 429 path
		}{
			{"teebody", transport.DefaultConfig(), false},
			{"spent budget", transport.Config{TotalBytes: 256, PerRequestBytes: 256}, true},
		} {
			t.Run(fmt.Sprintf("wrapTransport=%v/%s", wrap, tc.name), func(t *testing.T) {
				// An upstream of its own, so that its first connection is
				// this subtest's.
				up := proxytest.NewServer(fakeapi.New(fakeapi.Options{}), proxytest.Options{Every: 10, RefuseEvery: 3})
				t.Cleanup(up.Close)
				upCfg := &rest.Config{Host: up.URL, TLSClientConfig: rest.TLSClientConfig{
					CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: up.Certificate().Raw})}}
				inner, loc := upstreamTransport(t, upCfg)
				tc.cfg.ErrorLog = proxytest.QuietLog()
				tr := transport.New(inner, tc.cfg)
				spec := serveProxy(t, upgradeAware(loc, tr, wrap, tr.Responder()))
				res, err := load.Run(context.Background(), testutil.Target(t, spec), load.Options{
					Name: tc.name, Workers: 10, OpsPerWorker: 15, BodySize: 1024, QPS: -1,
					NoRetry: !tc.spent, // client-go's retries of the 429s stay
				})
				require.NoError(t, err)
				require.NoError(t, tr.Drain(context.Background()))
				st := tr.Stats()
				t.Logf("%d/%d failed; responder: %d x 429, %d x 502; replays served %d, refused %+v",
					res.FailedOperations, res.TotalOperations, st.RetryLaterWritten, st.BadGatewayWritten, st.ReplaysServed, st.ReplaysRefused)
				assert.Zero(t, res.FailedOperations, "failures: %q", res.SampleErrors)
				assert.Zero(t, st.BadGatewayWritten, "the responder answered 502")
				assert.Zero(t, st.BytesHeld, "bytes held after the run")
				if tc.spent {
					assert.NotZero(t, st.RetryLaterWritten, "no 429: no GOAWAY met a body the budget could not hold")
				} else {
					assert.Zero(t, st.RetryLaterWritten, "429s with a budget to spare")
					assert.NotZero(t, st.ReplaysServed, "no replay: no GOAWAY met a write")
				}
			})
		}
	}
}
