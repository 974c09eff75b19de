package transport_test

import (
	"bytes"
	"context"
	"log"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// errorResponder is apimachinery's proxy.ErrorResponder, which
// UpgradeAwareHandler takes, written out: the library module may not import
// it. For a request without an upgrade, UpgradeAwareHandler forwards through
// an httputil.ReverseProxy whose ErrorHandler is the responder's Error, as
// newProxy(u, tr, responder.Error, nil) does here.
type errorResponder interface {
	Error(w http.ResponseWriter, req *http.Request, err error)
}

var _ errorResponder = (*transport.Transport)(nil).Responder()

// TestResponderGOAWAY: behind a proxy that answers its transport's errors
// with Responder, in front of a real HTTP/2 upstream that sends GOAWAY, the
// default Config makes every request succeed and the responder never
// answers; with buffering disabled (Go's own "cannot retry" errors) or a
// budget too small for any body (teebody's ErrNotReplayable), the requests a
// GOAWAY refused are answered 429, each counted in Stats.RetryLaterWritten.
// The only 502s are for a read of an unbuffered body that an earlier
// attempt closed, which proves nothing, counted in Stats.BadGatewayWritten.
func TestResponderGOAWAY(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  transport.Config
		fail bool // whether some requests must be answered 429
	}{
		{"default", quietConfig(), false},
		{"disabled", transport.Config{Disabled: true}, true},
		{"spent budget", transport.Config{TotalBytes: 256, PerRequestBytes: 256}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := refusingUpstream(t) // refuses streams with a GOAWAY: some requests always need a replay
			tr := transport.New(transportTo(t, u.srv), tc.cfg)
			var responder errorResponder = tr.Responder()
			var answers answerLog
			f := newFront(t, true, newProxy(u, tr, answers.wrap(responder.Error), nil))
			r := runLoad(context.Background(), f.client(t), f.srv.URL, uniformBodies(700, requestCount(400), 1<<10, 8<<10), 16)
			st := tr.Stats()
			t.Logf("%v; %d GOAWAYs; answers %v; stats %+v", r, u.srv.Goaways(), &answers, st)
			if u.srv.Goaways() == 0 {
				t.Fatalf("the upstream sent no GOAWAY")
			}
			// Every failure is answered: 429 when it proves the upstream did
			// not process the request, 502 for a body that is not kept and
			// that a resend read after its first attempt closed it.
			retryLater, badGateway := answers.check(t)
			if r.errs[statusRetryLater] != retryLater || retryLater+badGateway != r.failed {
				t.Errorf("%d failed (%v); ErrorHandler answered %d with 429 and %d with 502", r.failed, r.errs, retryLater, badGateway)
			}
			if st.RetryLaterWritten != int64(retryLater) || st.BadGatewayWritten != int64(badGateway) {
				t.Errorf("RetryLaterWritten %d, BadGatewayWritten %d; want %d and %d", st.RetryLaterWritten, st.BadGatewayWritten, retryLater, badGateway)
			}
			if badGateway != 0 && !tc.cfg.Disabled {
				t.Errorf("%d answered 502 with buffering on: a buffered body is never read closed", badGateway)
			}
			if n := u.wrong.Load(); n != 0 {
				t.Errorf("%d bodies arrived with wrong bytes", n)
			}
			switch {
			case tc.fail && r.failed == 0:
				t.Errorf("no request met a GOAWAY")
			case !tc.fail && r.failed != 0:
				t.Errorf("%d requests failed with a budget to spare, want 0", r.failed)
			case !tc.fail && st.ReplaysServed == 0:
				t.Errorf("ReplaysServed = 0, want > 0")
			}
			drain(t, tr)
		})
	}
}

// TestResponderBadGateway: an upstream that cannot be reached gets 502 with
// a Kubernetes Status, even for a path outside the Kubernetes API. The
// error is logged to Config.ErrorLog, never written to the client, and
// counted in Stats.BadGatewayWritten.
func TestResponderBadGateway(t *testing.T) {
	dead := proxytest.DeadAddr(t)
	target := &url.URL{Scheme: "http", Host: dead}
	var logged bytes.Buffer
	cfg := quietConfig()
	cfg.ErrorLog = log.New(&logged, "", 0)
	inner := &http.Transport{}
	t.Cleanup(inner.CloseIdleConnections)
	tr := transport.New(inner, cfg)
	resp, body := proxyFront(t, target, tr, tr.Responder().Error).post(t, "/upload", "a body")
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d, want %d", resp.StatusCode, http.StatusBadGateway)
	}
	checkBadGatewayStatus(t, resp, body)
	if bytes.Contains(body, []byte(dead)) || bytes.Contains(body, []byte("refused")) {
		t.Errorf("the body %q names the upstream or its error", body)
	}
	if got := logged.String(); !strings.HasPrefix(got, "http: proxy error: ") || !strings.Contains(got, dead) || !strings.Contains(got, "connection refused") {
		t.Errorf("logged %q, want the error naming %s", got, dead)
	}
	st := tr.Stats()
	if st.BadGatewayWritten != 1 || st.RetryLaterWritten != 0 {
		t.Errorf("BadGatewayWritten %d, RetryLaterWritten %d; want 1, 0", st.BadGatewayWritten, st.RetryLaterWritten)
	}
	drain(t, tr)
}
