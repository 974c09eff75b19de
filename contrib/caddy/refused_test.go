package teebodycaddy_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestRefused429: a body that outgrew per_request cannot be replayed after
// the upstream's GOAWAY, so the request was not processed and the client may
// send it again: Caddy answers 429 with the Retry-After of retry_after, never
// 502, either way on_refused says; with "error", Caddy's handle_errors sees
// the 429 and the Retry-After placeholder.
func TestRefused429(t *testing.T) {
	body := randomBody(64 << 10)
	for _, tc := range []struct {
		name, onRefused, handleErrors, wantBody string
	}{
		{name: "respond", onRefused: "respond", wantBody: "please try again in 3s\n"}, // plain text
		{name: "status", onRefused: "status", wantBody: `"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the request body could not be replayed after the upstream closed its connection; please try again in 3s","reason":"TooManyRequests","details":{"retryAfterSeconds":3},"code":429}`},
		{name: "error", onRefused: "error", handleErrors: `
	handle_errors {
		header Retry-After {teebody.retry_after}
		respond "handled {err.status_code}" {err.status_code}
	}`, wantBody: "handled 429"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstreamRefusingPast(t, 1<<10) // per_request
			tester, addr := startCaddy(t, `%s {
	reverse_proxy `+up.URL+` {
		transport teebody {
			per_request 1KiB
			retry_after 3s
			on_refused `+tc.onRefused+`
			name refuse-`+tc.name+`
			tls_insecure_skip_verify
		}
	}`+tc.handleErrors+`
}
`)
			resp, text := post(t, tester, addr+"/upload", "refused", body)
			if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "3" {
				t.Fatalf("POST: %s, Retry-After %q, %q; want 429, Retry-After 3", resp.Status, resp.Header.Get("Retry-After"), text)
			}
			if !strings.Contains(text, tc.wantBody) {
				t.Errorf("the answer's body %q does not contain %q", text, tc.wantBody)
			}
			if up.Goaways() != 1 {
				t.Fatalf("the upstream sent %d GOAWAYs, want 1", up.Goaways())
			}
			if intact, wrong := up.arrivals("refused"); intact != 0 || wrong != 0 {
				t.Errorf("the body arrived intact %d times, damaged %d times; want 0 and 0", intact, wrong)
			}
			m := metrics(t, tester)
			if n := metric(t, m, `teebody_error_responses_total{code="429",transport="refuse-`+tc.name+`"}`); n != 1 {
				t.Errorf("teebody_error_responses_total{code=429} = %v, want 1", n)
			}
			if n := metric(t, m, `teebody_replays_refused_total{reason="too_large",transport="refuse-`+tc.name+`"}`); n < 1 {
				t.Errorf("teebody_replays_refused_total{reason=too_large} = %v, want >= 1", n)
			}
		})
	}
}
