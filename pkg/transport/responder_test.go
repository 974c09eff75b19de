package transport_test

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
// GOAWAY refused are answered 429, never 502, each counted in
// Stats.RetryLaterWritten.
func TestResponderGOAWAY(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  transport.Config
		fail bool // whether some requests must be answered 429
	}{
		{"default", quietConfig(), false},
		{"disabled", transport.Config{}, true},
		{"spent budget", transport.Config{TotalBytes: 256, PerRequestBytes: 256}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := refusingUpstream(t) // refuses streams with a GOAWAY: some requests always need a replay
			tr := transport.New(transportTo(t, u.srv), tc.cfg)
			var responder errorResponder = tr.Responder()
			f := newFront(t, true, newProxy(u, tr, responder.Error, nil))
			r := runLoad(context.Background(), f.client(t), f.srv.URL, uniformBodies(700, requestCount(400), 1<<10, 8<<10), 16)
			st := tr.Stats()
			t.Logf("%v; %d GOAWAYs; stats %+v", r, u.srv.Goaways(), st)
			require.NotZero(t, u.srv.Goaways(), "the upstream sent no GOAWAY")
			assert.Equal(t, r.failed, r.errs[statusRetryLater], "failures other than 429: %v", r.errs)
			assert.Equal(t, int64(r.failed), st.RetryLaterWritten, "429s counted")
			assert.Zero(t, st.BadGatewayWritten, "502s written")
			assert.Zero(t, u.wrong.Load(), "bodies that arrived with wrong bytes")
			if tc.fail {
				assert.NotZero(t, r.failed, "no request met a GOAWAY")
			} else {
				assert.Zero(t, r.failed, "failures with a budget to spare")
				assert.NotZero(t, st.ReplaysServed, "no replay served")
			}
			drain(t, tr)
		})
	}
}

// TestResponderBadGateway: an upstream that cannot be reached gets 502 with
// a Kubernetes Status naming the error, which is logged to Config.ErrorLog
// and counted in Stats.BadGatewayWritten.
func TestResponderBadGateway(t *testing.T) {
	u := newUpstream(t, true, 0)
	inner := transportTo(t, u.srv)
	u.srv.Close() // nothing listens at its address any more
	var logged bytes.Buffer
	cfg := quietConfig()
	cfg.ErrorLog = log.New(&logged, "", 0)
	tr := transport.New(inner, cfg)
	f := newFront(t, true, newProxy(u, tr, tr.Responder().Error, nil))

	resp, err := f.client(t).RoundTrip(newPost(context.Background(), f.srv.URL, uniformBodies(9, 1, 100, 100)[0], ""))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Empty(t, resp.Header.Get("Retry-After"))
	msg := checkStatus(t, body, http.StatusBadGateway, nil)
	assert.True(t, strings.HasPrefix(msg, "proxy error: ") && strings.Contains(msg, "connection refused"), "message %q", msg)
	assert.Equal(t, "http: "+msg+"\n", logged.String(), "logged")
	st := tr.Stats()
	assert.Equal(t, int64(1), st.BadGatewayWritten)
	assert.Zero(t, st.RetryLaterWritten)
	drain(t, tr)
}

// TestWriteBadGateway: the 502 Status carries "proxy error" and the error's
// text, or "proxy error" alone for a nil error.
func TestWriteBadGateway(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{context.DeadlineExceeded, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"proxy error: context deadline exceeded","code":502}`},
		{nil, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"proxy error","code":502}`},
	} {
		rec := httptest.NewRecorder()
		transport.WriteBadGateway(rec, tc.err)
		assert.Equal(t, http.StatusBadGateway, rec.Code)
		assert.Equal(t, tc.want, rec.Body.String())
		assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
		assert.Equal(t, strconv.Itoa(len(tc.want)), rec.Header().Get("Content-Length"))
	}
}
