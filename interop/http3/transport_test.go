package http3_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// TestTransportResendsWhatQuicGoGaveUp: where quic-go gives up (the facts'
// bare errors: refused twice, or a GOAWAY before the stream twice),
// teebody's Transport sends the request again from its kept body. The
// upstream processes it once, with every byte.
func TestTransportResendsWhatQuicGoGaveUp(t *testing.T) {
	for _, tc := range []struct {
		name     string
		plan     []int
		warm     bool
		attempts int // Report.Attempts: bodies read
	}{
		{"rejected twice", []int{stepReject, stepReject, stepPass}, false, 3},
		{"goaway twice", []int{stepGoAway, stepGoAway, stepPass}, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newFactRig(t)
			if tc.warm {
				r.warmUp()
			}
			tr := transport.New(r.client, transport.DefaultConfig())
			payload := randomPayload(t, 64<<10)
			fr := r.post(payload, false, tc.plan...)
			var report transport.Report
			fr.req = fr.req.WithContext(transport.WithReport(fr.req.Context(), &report))
			resp, err := tr.RoundTrip(fr.req)
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status %d, want 200", resp.StatusCode)
			}
			got := r.received()
			if tc.warm {
				got = got[1:]
			}
			if len(got) != 1 || !bytes.Equal(got[0], payload) {
				t.Errorf("the upstream processed %d requests, want the one, intact", len(got))
			}
			if report.Attempts != tc.attempts {
				t.Errorf("Report.Attempts %d, want %d", report.Attempts, tc.attempts)
			}
		})
	}
}

// TestTransportNotReplayable429: a refused body that teebody could not
// keep fails with an error matching teebody.ErrNotReplayable, which
// ErrorHandler answers with 429, never 502. The refusal reaches the client
// only once the Tee has read past its limit and handled those bytes: before
// that, a replay would still be possible, and right.
func TestTransportNotReplayable429(t *testing.T) {
	const limit = 4 << 10
	r := newFactRig(t)
	r.releaseAfter = 2 * limit
	cfg := transport.DefaultConfig()
	cfg.PerRequestBytes = limit
	tr := transport.New(r.client, cfg)
	fr := r.post(randomPayload(t, 64<<10), false, stepReject, stepPass)
	_, err := tr.RoundTrip(fr.req)
	if !errors.Is(err, teebody.ErrNotReplayable) {
		t.Fatalf("RoundTrip error %v, want one matching teebody.ErrNotReplayable", err)
	}
	rec := httptest.NewRecorder()
	tr.ErrorHandler(rec, fr.req, err)
	if rec.Code != http.StatusTooManyRequests {
		t.Errorf("ErrorHandler answered %d, want 429", rec.Code)
	}
	if got := r.received(); len(got) != 0 {
		t.Errorf("the upstream processed %d requests, want none", len(got))
	}
}
