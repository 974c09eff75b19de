package teebodycaddy_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"

	_ "github.com/teebody/teebody/contrib/caddy"
)

// globals is the Caddyfile's global options block for a test: the admin
// endpoint caddytest talks to, no automatic HTTPS, nothing saved.
func globals() string {
	return fmt.Sprintf(`{
	admin localhost:%d
	auto_https off
	persist_config off
	log {
		level WARN
	}
}
`, adminPort)
}

// caddy loads the Caddyfile into the in-process Caddy (starting it the first
// time) and returns the tester and the site address it serves,
// http://127.0.0.1:port, which site (a format string with one %s, the
// address) names.
func startCaddy(t *testing.T, site string) (*caddytest.Tester, string) {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("http://127.0.0.1:%d", p)
	tester := caddytest.NewTester(t).WithDefaultOverrides(caddytest.Config{AdminPort: adminPort})
	t.Cleanup(tester.Client.CloseIdleConnections)
	// caddytest skips, rather than fails, a test whose Caddy cannot start
	// (or that runs with -short): here that would pass a test that checked
	// nothing, so a skip fails it.
	t.Cleanup(func() {
		if t.Skipped() {
			t.Error("caddytest skipped the test (-short, or the in-process Caddy did not start): it would check nothing")
		}
	})
	tester.InitServer(globals()+fmt.Sprintf(site, addr), "caddyfile")
	if t.Failed() {
		t.FailNow()
	}
	return tester, addr
}

// post sends a POST of body with its checksum and id to url and returns the
// response, read whole.
func post(t *testing.T, tester *caddytest.Tester, url, id string, body []byte) (*http.Response, string) {
	t.Helper()
	sum := sha256.Sum256(body)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(hdrSum, hex.EncodeToString(sum[:]))
	req.Header.Set(hdrID, id)
	resp, err := tester.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(text)
}

// randomBody returns n bytes of a fixed seed.
func randomBody(n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{'c', 'a', 'd', 'd', 'y'}).Read(b)
	return b
}

// metrics returns the admin endpoint's /metrics.
func metrics(t *testing.T, tester *caddytest.Tester) string {
	t.Helper()
	resp, err := tester.Client.Get(fmt.Sprintf("http://localhost:%d/metrics", adminPort))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// metric returns the value of the series (name and labels, as exposed) in
// the text of /metrics; a missing series fails the test.
func metric(t *testing.T, text, series string) float64 {
	t.Helper()
	for l := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", series, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no series %s", series)
	return 0
}

// TestGOAWAY sends a POST through Caddy to an upstream whose first connection
// refuses it with a graceful GOAWAY after a piece of its body: through
// `transport http` Caddy answers 502; through `transport teebody` the body is
// replayed on a new connection and arrives whole, once, and the replay shows
// on Caddy's metrics endpoint under the transport's name.
func TestGOAWAY(t *testing.T) {
	body := randomBody(64 << 10)
	for _, tc := range []struct {
		transport string
		want      int
	}{
		{"http", http.StatusBadGateway},
		{"teebody", http.StatusOK},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			if tc.transport == "http" && raceEnabled {
				// Caddy's own transport closes its body wrapper while the HTTP/2
				// transport still reads it, and the wrapper has no lock, so the
				// race detector fails the baseline. make test runs it without.
				t.Skip("Caddy's transport http races on its request body; the baseline runs without -race")
			}
			up := newUpstream(t, true, nil)
			tester, addr := startCaddy(t, `%s {
	reverse_proxy `+up.URL+` {
		transport `+tc.transport+` {
			tls_insecure_skip_verify
		}
	}
}
`)
			resp, text := post(t, tester, addr+"/upload", "goaway", body)
			if resp.StatusCode != tc.want {
				t.Fatalf("POST through transport %s: %s %q, want %d", tc.transport, resp.Status, text, tc.want)
			}
			if up.Goaways() != 1 {
				t.Fatalf("the upstream sent %d GOAWAYs, want 1: the request did not meet the refusal", up.Goaways())
			}
			intact, wrong := up.arrivals("goaway")
			if tc.want == http.StatusOK && intact != 1 || wrong != 0 {
				t.Fatalf("the body arrived intact %d times, damaged %d times; want 1 and 0", intact, wrong)
			}
			if tc.transport == "teebody" {
				m := metrics(t, tester)
				// GetBody may be called more than once for one refusal (net/http rewinds too).
				if n := metric(t, m, `teebody_replays_served_total{transport="0"}`); n < 1 {
					t.Errorf("teebody_replays_served_total = %v, want >= 1", n)
				}
				if n := metric(t, m, `teebody_buffered_requests_total{transport="0"}`); n != 1 {
					t.Errorf("teebody_buffered_requests_total = %v, want 1", n)
				}
			}
		})
	}
}
