package teebodycaddy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

// accessLogFields is the site block's part of a test that logs the teebody
// placeholders with log_append to the access log at path.
func accessLogFields(path string) string {
	return `
	log_append teebody_attempts {http.reverse_proxy.teebody.attempts}
	log_append teebody_refused {http.reverse_proxy.teebody.refused}
	log_append teebody_withheld {http.reverse_proxy.teebody.withheld}
	log_append teebody_buffered {http.reverse_proxy.teebody.buffered}
	log_append teebody_passed_through {http.reverse_proxy.teebody.passed_through}
	log_append teebody_peak_bytes {http.reverse_proxy.teebody.peak_bytes}
	log {
		output file ` + path + ` {
			roll_disabled # a roller leaves a goroutine behind
		}
		format json
	}`
}

// teebodyFields is what the access log holds of the teebody placeholders.
type teebodyFields struct {
	Attempts      *int   `json:"teebody_attempts"`
	Refused       string `json:"teebody_refused"`
	Withheld      bool   `json:"teebody_withheld"`
	Buffered      bool   `json:"teebody_buffered"`
	PassedThrough string `json:"teebody_passed_through"`
	PeakBytes     int64  `json:"teebody_peak_bytes"`
}

// accessLog returns the teebody fields of the access log at path, a line per
// request, by the request's hdrID. Caddy writes a request's line before
// net/http sends the end of its response, which the tests have read.
func accessLog(t *testing.T, path string) map[string]teebodyFields {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := map[string]teebodyFields{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			teebodyFields
			Request struct {
				Headers http.Header `json:"headers"`
			} `json:"request"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("access log line %q: %v", sc.Text(), err)
		}
		lines[line.Request.Headers.Get(hdrID)] = line.teebodyFields
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestPlaceholdersReplayed: a POST that the upstream's first connection
// refuses with a GOAWAY is sent twice, which its placeholders tell a header
// directive and the access log (log_append); a GET has no body, which
// passes through.
func TestPlaceholdersReplayed(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "access.log")
	up := newUpstream(t, true, nil)
	tester, addr := startCaddy(t, `%s {`+accessLogFields(logPath)+`
	header {
		X-Teebody-Attempts {http.reverse_proxy.teebody.attempts}
		X-Teebody-Passed-Through "passed:{http.reverse_proxy.teebody.passed_through}"
		defer
	}
	reverse_proxy `+up.URL+` {
		transport teebody {
			tls_insecure_skip_verify
		}
	}
}
`)
	body := randomBody(64 << 10)
	resp, text := post(t, tester, addr+"/upload", "replayed", body)
	if resp.StatusCode != http.StatusOK || up.Goaways() != 1 {
		t.Fatalf("POST: %s %q after %d GOAWAYs; want 200 after 1", resp.Status, text, up.Goaways())
	}
	if got := resp.Header.Get("X-Teebody-Attempts"); got != "2" {
		t.Errorf("X-Teebody-Attempts = %q, want 2", got)
	}
	if got := resp.Header.Get("X-Teebody-Passed-Through"); got != "passed:" {
		t.Errorf("X-Teebody-Passed-Through = %q, want %q", got, "passed:")
	}

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(hdrID, "get")
	get, err := tester.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	if got := get.Header.Get("X-Teebody-Passed-Through"); got != "passed:no_body" {
		t.Errorf("GET: X-Teebody-Passed-Through = %q, want %q", got, "passed:no_body")
	}

	lines := accessLog(t, logPath)
	for id, want := range map[string]teebodyFields{
		"replayed": {Attempts: ptr(2), Buffered: true, PeakBytes: int64(len(body))},
		"get":      {Attempts: ptr(0), PassedThrough: "no_body"},
	} {
		got, ok := lines[id]
		if !ok {
			t.Errorf("the access log has no line for %s: %v", id, lines)
			continue
		}
		if got.Attempts == nil || *got.Attempts != *want.Attempts || got.Refused != want.Refused ||
			got.Withheld != want.Withheld || got.Buffered != want.Buffered || got.PassedThrough != want.PassedThrough || got.PeakBytes < want.PeakBytes {
			t.Errorf("access log of %s: %+v (attempts %v); want %+v (attempts %d) with at least the peak bytes",
				id, got, deref(got.Attempts), want, *want.Attempts)
		}
	}
}

// TestPlaceholdersRefused: a body that outgrew per_request cannot be
// replayed after the upstream's GOAWAY; its handle_errors route (on_refused
// error) and its access log see why.
func TestPlaceholdersRefused(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "access.log")
	up := newUpstreamRefusingPast(t, 1<<10) // per_request
	tester, addr := startCaddy(t, `%s {`+accessLogFields(logPath)+`
	reverse_proxy `+up.URL+` {
		transport teebody {
			per_request 1KiB
			on_refused error
			name placeholders-refused
			tls_insecure_skip_verify
		}
	}
	handle_errors 429 {
		respond "attempts={http.reverse_proxy.teebody.attempts} refused={http.reverse_proxy.teebody.refused} buffered={http.reverse_proxy.teebody.buffered}" 429
	}
}
`)
	resp, text := post(t, tester, addr+"/upload", "refused", randomBody(64<<10))
	const want = "attempts=1 refused=too_large buffered=true"
	if resp.StatusCode != http.StatusTooManyRequests || text != want {
		t.Fatalf("POST: %s %q; want 429 %q", resp.Status, text, want)
	}
	got, ok := accessLog(t, logPath)["refused"]
	if !ok || got.Attempts == nil || *got.Attempts != 1 || got.Refused != "too_large" || got.PeakBytes > 1<<10 {
		t.Errorf("access log: %+v (attempts %v, found %v); want 1 attempt, refused too_large, at most 1 KiB held",
			got, deref(got.Attempts), ok)
	}
}

// TestPlaceholdersWithheld: a POST with an Idempotency-Key, which net/http's
// HTTP/1 transport would send again, that the upstream applied before it
// dropped the reused connection, is not sent again: its client gets a 502,
// its access log says that the replay was withheld, and so does the metric.
func TestPlaceholdersWithheld(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "access.log")
	up := proxytest.NewDropper(t)
	tester, addr := startCaddy(t, `%s {`+accessLogFields(logPath)+`
	reverse_proxy `+up.URL+` {
		transport teebody {
			name withheld
		}
	}
}
`)
	// A GET first, so that Caddy sends the POST on a reused connection.
	get, err := tester.Client.Get(addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, get.Body)
	get.Body.Close()

	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, addr+"/upload", bytes.NewReader(randomBody(4<<10)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(hdrID, "withheld")
	req.Header.Set("Idempotency-Key", "key-1")
	resp, err := tester.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || up.Applied() != 1 {
		t.Fatalf("POST: %s, applied %d times; want 502, applied once", resp.Status, up.Applied())
	}
	got, ok := accessLog(t, logPath)["withheld"]
	if !ok || !got.Withheld || got.Refused != "" || !got.Buffered {
		t.Errorf("access log: %+v (found %v); want a buffered body whose replay was withheld, none refused", got, ok)
	}
	if n := metric(t, metrics(t, tester), `teebody_replays_withheld_total{transport="withheld"}`); n != 1 {
		t.Errorf("teebody_replays_withheld_total = %v, want 1", n)
	}
}

// TestPlaceholdersLBRetries: a POST whose first upstream could not be
// dialled is sent once, to the second: the attempts of Caddy's lb_retries
// add up, and the one that read nothing adds nothing.
func TestPlaceholdersLBRetries(t *testing.T) {
	closed, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t, false, nil)
	tester, addr := startCaddy(t, `%s {
	header X-Teebody-Attempts {http.reverse_proxy.teebody.attempts} {
		defer
	}
	reverse_proxy https://127.0.0.1:`+fmt.Sprint(closed)+` `+up.URL+` {
		lb_policy first
		lb_retries 1
		fail_duration 1m
		transport teebody {
			tls_insecure_skip_verify
		}
	}
}
`)
	resp, text := post(t, tester, addr+"/upload", "dial", randomBody(64<<10))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST: %s %q, want 200 from the second upstream", resp.Status, text)
	}
	if got := resp.Header.Get("X-Teebody-Attempts"); got != "1" {
		t.Errorf("X-Teebody-Attempts = %q, want 1", got)
	}
}

func ptr(n int) *int { return &n }

// deref returns *p, or nil for a nil p, for a message.
func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
