package grpc

import (
	"context"
	"log"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// retryAfter is the Config.RetryAfter of these tests: the pushback that the
// answers carry, far longer than the retry policy's backoff.
const retryAfter = 300 * time.Millisecond

// The grpc-message of each answer, as grpc-go's client shows it.
const (
	wantRetryLater = "the request body could not be replayed after the upstream closed its connection; try again later"
	wantBadGateway = "the proxy got no response from the upstream"
)

// retryPolicy is a service config that retries UNAVAILABLE once, after a
// backoff of about 10 ms unless the answer sets a pushback.
const retryPolicy = `{"methodConfig": [{
	"name": [{"service": "` + serviceName + `"}],
	"retryPolicy": {
		"maxAttempts": 2,
		"initialBackoff": "0.01s",
		"maxBackoff": "0.01s",
		"backoffMultiplier": 1,
		"retryableStatusCodes": ["UNAVAILABLE"]
	}
}]}`

// newRefusedSetup starts a grpc-go server behind a listener that refuses
// the streams of its next connection, behind a ReverseProxy whose Transport
// keeps at most one byte of a body. The refusal waits for more than that
// byte, so that the refused request cannot be sent again: refused after the
// first byte alone, it would be. It returns the Transport, the listener,
// the server, and two clients of the proxy: one without retries, one with
// retryPolicy.
func newRefusedSetup(t *testing.T) (*transport.Transport, *refusingListener, *upstream, *grpc.ClientConn, *grpc.ClientConn) {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := transport.DefaultConfig()
	cfg.PerRequestBytes = 1
	cfg.RetryAfter = retryAfter
	ln := newRefusingListener(raw, cfg.PerRequestBytes)
	ln.refuse.Store(1)
	u := startUpstream(t, ln, false)
	tr := transport.New(h2cTransport(), cfg)
	addr, pool := startProxy(t, u, tr, tr.ErrorHandler, nil)
	noRetry := dial(t, addr, pool, grpc.WithDisableRetry())
	retry := dial(t, addr, pool, grpc.WithDefaultServiceConfig(retryPolicy))
	return tr, ln, u, noRetry, retry
}

// TestRefusedUnavailable: a request that the upstream refused and the
// Transport cannot replay fails at the grpc-go client with UNAVAILABLE, the
// answer's message and the pushback of Config.RetryAfter; it never reached
// the server's handler.
func TestRefusedUnavailable(t *testing.T) {
	tr, ln, u, cc, _ := newRefusedSetup(t)
	var trailer metadata.MD
	err := callUnary(context.Background(), cc, 1, grpc.Trailer(&trailer))
	st, _ := status.FromError(err)
	if st.Code() != codes.Unavailable || st.Message() != wantRetryLater {
		t.Errorf("got %v; want code Unavailable, message %q", err, wantRetryLater)
	}
	if got := trailer.Get("grpc-retry-pushback-ms"); len(got) != 1 || got[0] != "300" {
		t.Errorf("grpc-retry-pushback-ms %q, want [300]", got)
	}
	s := tr.Stats()
	if ln.refused.Load() != 1 || s.RetryLaterWritten != 1 || s.BadGatewayWritten != 0 {
		t.Errorf("%d refusals, %d retry-later and %d bad-gateway answers; want 1, 1, 0", ln.refused.Load(), s.RetryLaterWritten, s.BadGatewayWritten)
	}
	if seen, _, _ := u.svc.counts(); seen != 0 {
		t.Errorf("the server ran %d RPCs, want none", seen)
	}
}

// TestRefusedRetriedAfterPushback: a grpc-go client whose service config
// retries UNAVAILABLE waits the answer's pushback, then succeeds, for each
// kind of RPC; the server runs each RPC once.
func TestRefusedRetriedAfterPushback(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(context.Context, *grpc.ClientConn, uint64) error
	}{
		{"unary", func(ctx context.Context, cc *grpc.ClientConn, id uint64) error { return callUnary(ctx, cc, id) }},
		{"client-streaming", callUpload},
		{"bidirectional", callChat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, ln, u, _, cc := newRefusedSetup(t)
			start := time.Now()
			err := tc.call(context.Background(), cc, 7)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("with a retry policy: %v", err)
			}
			if took < retryAfter {
				t.Errorf("succeeded after %v, before the pushback of %v", took, retryAfter)
			}
			s := tr.Stats()
			if ln.refused.Load() != 1 || s.RetryLaterWritten != 1 {
				t.Errorf("%d refusals, %d retry-later answers; want 1, 1", ln.refused.Load(), s.RetryLaterWritten)
			}
			if seen, dups, bad := u.svc.counts(); seen != 1 || dups != 0 || bad != 0 {
				t.Errorf("the server saw %d RPCs, %d twice, %d bad messages; want 1, 0, 0", seen, dups, bad)
			}
			t.Logf("%s: refused once, succeeded after %v (pushback %v)", tc.name, took.Round(time.Millisecond), retryAfter)
		})
	}
}

// TestDeadUpstreamUnavailable: a proxy whose upstream cannot be reached
// answers a grpc-go client UNAVAILABLE with its own message, no pushback
// and nothing of the dial error.
func TestDeadUpstreamUnavailable(t *testing.T) {
	cfg := transport.DefaultConfig()
	var logged proxytest.SyncBuffer
	cfg.ErrorLog = log.New(&logged, "", 0)
	tr := transport.New(h2cTransport(), cfg)
	dead := &upstream{addr: proxytest.DeadAddr(t), svc: newChecked()}
	addr, pool := startProxy(t, dead, tr, tr.ErrorHandler, nil)
	cc := dial(t, addr, pool, grpc.WithDisableRetry())
	var trailer metadata.MD
	err := callUnary(context.Background(), cc, 1, grpc.Trailer(&trailer))
	st, _ := status.FromError(err)
	if st.Code() != codes.Unavailable || st.Message() != wantBadGateway {
		t.Errorf("got %v; want code Unavailable, message %q", err, wantBadGateway)
	}
	if strings.Contains(st.Message(), dead.addr) || strings.Contains(st.Message(), "dial") {
		t.Errorf("the message %q holds the error's text", st.Message())
	}
	if got := trailer.Get("grpc-retry-pushback-ms"); len(got) != 0 {
		t.Errorf("grpc-retry-pushback-ms %q, want none", got)
	}
	if s := tr.Stats(); s.BadGatewayWritten != 1 || s.RetryLaterWritten != 0 {
		t.Errorf("%d bad-gateway and %d retry-later answers; want 1, 0", s.BadGatewayWritten, s.RetryLaterWritten)
	}
	if !strings.Contains(logged.String(), dead.addr) {
		t.Errorf("the proxy's log %q does not name the error", logged.String())
	}
}
