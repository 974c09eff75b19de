//go:build unix

package e2e

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// caddyFlags are the Caddy experiment's knobs; the defaults are the run recorded in docs/E2E.md.
var caddyFlags struct {
	small, large int // POSTs per arm of 1 KiB and of 64 KiB
}

func init() {
	flag.IntVar(&caddyFlags.small, "caddy-requests-1k", 20000, "POSTs of 1 KiB per Caddy arm (0 skips that load)")
	flag.IntVar(&caddyFlags.large, "caddy-requests-64k", 5000, "POSTs of 64 KiB per Caddy arm (0 skips that load)")
}

// caddyArm is one way of configuring Caddy's reverse_proxy in front of nginx.
type caddyArm struct {
	name    string
	how     string // for the table
	block   string // the reverse_proxy block's lines; %[1]s is nginx's CA file
	replays string // the table's replays when Caddy's metrics have no teebody_replays_served_total
}

var caddyArms = []caddyArm{
	{
		name:    "default",
		how:     "Caddy's default transport (`transport http`)",
		replays: "none (no `lb_retries`)",
		block: `transport http {
			tls_trust_pool file %[1]s
		}`,
	},
	{
		name:    "request_buffers",
		how:     "Caddy's best effort: `request_buffers 1MiB`, `lb_retries 3`, `lb_retry_match` POST",
		replays: "not counted (Caddy's retries)",
		block: `request_buffers 1MiB
		lb_retries 3
		lb_retry_match {
			method POST
		}
		transport http {
			tls_trust_pool file %[1]s
		}`,
	},
	{
		name: "teebody",
		how:  "`transport teebody`",
		block: `transport teebody {
			tls_trust_pool file %[1]s
		}`,
	},
}

// caddyConf is the Caddyfile of an arm: the admin endpoint on a port of its own (its /metrics is read), no
// automatic HTTPS, nothing saved, the log at INFO (Caddy logs each failed request as an error); one site on
// loopback that proxies to nginx over HTTP/2 and TLS.
const caddyConf = `{
	admin 127.0.0.1:%[1]d
	auto_https off
	persist_config off
}
http://127.0.0.1:%[2]d {
	reverse_proxy %[3]s {
		%[4]s
	}
}
`

// caddyRow is one arm's outcome on one load.
type caddyRow struct {
	arm          caddyArm
	bodySize     int
	out          loadOutcome
	goawayErrors int     // Caddy's logged errors that are the GOAWAY failure
	errors       int     // every error Caddy logged for a request
	replays      float64 // teebody_replays_served_total, -1 when the transport does not count them
	cpu          float64 // Caddy's CPU seconds during the load (process_cpu_seconds_total)
	intact       int     // requests answered 200 whose body reached the backend intact, exactly once
}

// TestCaddy puts a real Caddy (e2e/bin/caddy, built by build-caddy.sh with teebody's transport module) in front
// of the real nginx of TestNginx (HTTP/2 over TLS, default keepalive_requests, the checksumming backend), and
// sends the same POSTs through it three ways: Caddy's default transport (some fail: the experiment is broken
// otherwise), Caddy's own best effort (request_buffers with lb_retries for POST), and transport teebody (none may
// fail). The client sends a 429'd request again after its Retry-After. Every request answered 200 must have
// reached the backend intact exactly once. It records, per arm and body size, the failures, 429s, replays,
// Caddy's CPU per upload and the p99 latency.
func TestCaddy(t *testing.T) {
	if os.Getenv(envRun) != "1" {
		t.Skipf("the end-to-end suite runs real servers: run `make e2e` (or ./build-caddy.sh, then %s=1 go test -run TestCaddy -v .) to run it", envRun)
	}
	bin := findNginx(t)
	caddy := binary(t, "caddy")
	dir := outDir(t, "caddy")
	version, err := exec.Command(caddy, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v: %s", caddy, err, version)
	}
	t.Logf("%s: %s", caddy, strings.TrimSpace(string(version)))
	backend := newCheckingBackend(t)
	ngx := startNginx(t, bin, dir, backend.addr())

	var rows []caddyRow
	for _, load := range []struct{ size, requests int }{{1 << 10, caddyFlags.small}, {64 << 10, caddyFlags.large}} {
		if load.requests == 0 {
			continue
		}
		for _, arm := range caddyArms {
			t.Run(fmt.Sprintf("%s/%dKiB", arm.name, load.size>>10), func(t *testing.T) {
				r := runCaddyArm(t, caddy, dir, ngx, backend, arm, load.size, load.requests)
				rows = append(rows, r)
				t.Logf("%s, %d B: %d POSTs in %v: %d ok, %d failed %v; Caddy logged %d GOAWAY errors of %d; %d answers of 429; %v replays; %.0f µs CPU per upload; p99 %v",
					arm.name, load.size, load.requests, r.out.duration.Round(time.Millisecond), r.out.ok, r.out.failed, r.out.failures,
					r.goawayErrors, r.errors, r.out.retryLater, r.replays, r.cpuPerUpload(), r.out.p99().Round(time.Millisecond))
				if r.intact != r.out.ok {
					t.Errorf("%d requests answered 200, but %d reached the backend intact exactly once", r.out.ok, r.intact)
				}
				if arm.name == "teebody" {
					if r.out.failed != 0 {
						t.Errorf("%d failed through transport teebody: %v", r.out.failed, r.out.failures)
					}
					if r.replays == 0 {
						t.Errorf("no replay served: no request met nginx's GOAWAY, so the run proves nothing")
					}
				}
			})
		}
	}
	failedDefault := 0
	for _, r := range rows {
		if r.arm.name == "default" {
			failedDefault += r.out.failed
		}
	}
	if len(rows) > 0 && failedDefault == 0 {
		t.Errorf("no POST failed through Caddy's default transport: nginx's keepalive_requests looks off, and the experiment proves nothing")
	}
	if n := backend.wrong.Load(); n != 0 {
		t.Errorf("%d bodies reached the backend with bytes that did not match their checksum", n)
	}
	if ngx.exited() {
		t.Errorf("nginx exited during the runs: %v", ngx.waitErr)
	}
	table := caddyTable(rows)
	fmt.Printf("\n%s in front of nginx (HTTP/2 over TLS, default keepalive_requests), 32 clients:\n\n%s\n",
		strings.TrimSpace(string(version)), table)
	writeFile(t, filepath.Join(dir, "table.md"), []byte(table))
}

// runCaddyArm starts Caddy with the arm's config in front of ngx, runs the load through it, reads its metrics
// before and after, stops it and reads its log.
func runCaddyArm(t *testing.T, caddy, dir string, ngx *nginxServer, backend *checkingBackend, arm caddyArm, size, requests int) caddyRow {
	t.Helper()
	name := fmt.Sprintf("caddy-%s-%dk", arm.name, size>>10)
	admin, port := freePort(t), freePort(t)
	conf := filepath.Join(dir, name+".Caddyfile")
	writeFile(t, conf, fmt.Appendf(nil, caddyConf, admin, port, ngx.url, fmt.Sprintf(arm.block, ngx.caFile)))
	home := filepath.Join(dir, name+".home") // Caddy's storage and config folders
	cmd := exec.Command(caddy, "run", "--config", conf, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+home, "XDG_CONFIG_HOME="+home)
	p := startCmd(t, dir, name, cmd)

	ctx, cancel := context.WithTimeout(t.Context(), nginxRunTimeout)
	defer cancel()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	err := p.waitReady(ctx, "nginx's answer through Caddy", base)
	if err != nil {
		t.Fatal(err)
	}
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", admin)
	before := caddyMetrics(t, metricsURL)
	out := nginxLoad{arm: name, target: base, requests: requests, concurrency: nginxFlags.concurrency,
		bodySize: size, retry429: true}.run(ctx)
	if err := ctx.Err(); err != nil {
		t.Fatalf("the load did not end within %v", nginxRunTimeout)
	}
	after := caddyMetrics(t, metricsURL)
	r := caddyRow{arm: arm, bodySize: size, out: out, replays: -1,
		cpu: after["process_cpu_seconds_total"] - before["process_cpu_seconds_total"]}
	if v, ok := sumMetric(after, "teebody_replays_served_total"); ok {
		r.replays = v
	}
	p.shutdown(t)
	r.goawayErrors, r.errors = loggedCaddyErrors(t, p.logPath)
	for _, id := range out.okIDs {
		if backend.arrivals(id) == 1 {
			r.intact++
		}
	}
	return r
}

// caddyMetrics reads Caddy's admin /metrics.
func caddyMetrics(t *testing.T, url string) map[string]float64 {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return parseMetrics(t, resp.Body)
}

// loggedCaddyErrors counts the requests Caddy logged as errors (its http.log.error logger), and of those the ones
// whose error is the GOAWAY failure.
func loggedCaddyErrors(t *testing.T, logPath string) (goaway, all int) {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if !strings.Contains(line, `"logger":"http.log.error"`) {
			continue
		}
		all++
		if slices.ContainsFunc(goawayTexts, func(s string) bool { return strings.Contains(line, s) }) {
			goaway++
		}
	}
	return goaway, all
}

// cpuPerUpload is Caddy's CPU time per POST of the load, in microseconds.
func (r caddyRow) cpuPerUpload() float64 {
	n := r.out.ok + r.out.failed
	if n == 0 {
		return 0
	}
	return r.cpu * 1e6 / float64(n)
}

// caddyTable is the Markdown table of the arms.
func caddyTable(rows []caddyRow) string {
	var b strings.Builder
	b.WriteString("| Caddy in front of nginx | Body | POSTs | Failed | GOAWAY errors | 429 answers | Replays served | Intact at the backend | Caddy CPU per upload | p99 |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		replays := r.arm.replays
		if r.replays >= 0 {
			replays = fmt.Sprint(r.replays)
		}
		fmt.Fprintf(&b, "| %s | %d KiB | %d | %d | %d | %d | %s | %d | %.0f µs | %v |\n", r.arm.how, r.bodySize>>10,
			r.out.ok+r.out.failed, r.out.failed, r.goawayErrors, r.out.retryLater, replays, r.intact, r.cpuPerUpload(),
			r.out.p99().Round(100*time.Microsecond))
	}
	return b.String()
}
