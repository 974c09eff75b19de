//go:build unix

package e2e

import (
	"context"
	"encoding/json"
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

// nginxFlags are the nginx experiment's knobs; the defaults are the run recorded in docs/E2E.md.
var nginxFlags struct {
	bin                             string
	requests, concurrency, bodySize int
	require                         bool
}

func init() {
	flag.StringVar(&nginxFlags.bin, "nginx", "", "the nginx binary (default: nginx on the PATH, else /usr/sbin/nginx)")
	flag.IntVar(&nginxFlags.requests, "nginx-requests", 20000, "POSTs per proxy in the nginx experiment")
	flag.IntVar(&nginxFlags.concurrency, "nginx-concurrency", 32, "concurrent clients in the nginx experiment")
	flag.IntVar(&nginxFlags.bodySize, "nginx-body-size", 1024, "body size in bytes in the nginx experiment")
	flag.BoolVar(&nginxFlags.require, "require-nginx", false, "fail, not skip, when nginx is missing (also when CI is set)")
}

// nginxRunTimeout bounds one arm's load (20,000 POSTs take a few seconds).
const nginxRunTimeout = 10 * time.Minute

// The texts of the failure this project is about, as Go's transports and ReverseProxy put them (the library's
// ShouldRetryLater knows them; this module does not import it).
var goawayTexts = []string{
	"define Request.GetBody to avoid this error",
	"cannot rewind body after connection loss",
	"ReverseProxy does an invalid Read on closed Body",
}

// nginxArm is one Go proxy put in front of nginx.
type nginxArm struct {
	name     string
	mode     string // e2eproxy -mode
	how      string // for the table
	retry429 bool   // the client sends a 429'd request again after Retry-After
}

// proxyStats holds the fields of transport.Stats that the suite reads from e2eproxy's /_e2e/stats.
type proxyStats struct {
	Requests, Buffered, BufferedQuiet, ReplaysServed, RetryLaterWritten, BadGatewayWritten, AdaptiveTraces int64
	PassedThrough                                                                                          struct{ Quiet int64 }
}

// nginxRow is one arm's outcome.
type nginxRow struct {
	arm          nginxArm
	out          loadOutcome
	goawayErrors int            // the proxy's logged errors that are the GOAWAY failure
	proxyErrors  map[string]int // every error the proxy logged, by text
	stats        proxyStats
	intact       int // requests answered 200 whose body reached the backend intact, exactly once
}

// TestNginx puts a Go reverse proxy in front of a real nginx, started here with its default keepalive_requests
// (1000), which closes each HTTP/2 connection with a graceful GOAWAY after that many requests, in front of a
// backend that checks each body's checksum; and sends the same POSTs through it three ways: over a plain
// *http.Transport (some fail), over teebody's transport (none may), and in adaptive mode with a client that retries
// 429s (none may). Every request answered 200 must have reached the backend intact exactly once.
func TestNginx(t *testing.T) {
	if os.Getenv(envRun) != "1" {
		t.Skipf("the end-to-end suite runs real servers: run `make e2e` (or %s=1 go test -run TestNginx -v .) to run it", envRun)
	}
	bin := findNginx(t)
	dir := outDir(t, "nginx")
	version, err := exec.Command(bin, "-v").CombinedOutput()
	if err != nil {
		t.Fatalf("%s -v: %v: %s", bin, err, version)
	}
	t.Logf("%s: %s", bin, strings.TrimSpace(string(version)))
	proxyBin, err := goBuild(t.Context(), "..", "./internal/cmd/e2eproxy", filepath.Join(dir, "e2eproxy"))
	if err != nil {
		t.Fatal(err)
	}
	backend := newCheckingBackend(t)
	ngx := startNginx(t, bin, dir, backend.addr())

	arms := []nginxArm{
		{name: "plain", mode: "plain", how: "`httputil.ReverseProxy` over a plain `*http.Transport`"},
		{name: "teebody", mode: "teebody", how: "over `transport.New(…, DefaultConfig())`, `ErrorHandler: tr.ErrorHandler`"},
		{name: "adaptive", mode: "adaptive", how: "the same with `Adaptive`; the client retries 429", retry429: true},
	}
	var rows []nginxRow
	for _, arm := range arms {
		t.Run(arm.name, func(t *testing.T) {
			r := runNginxArm(t, proxyBin, dir, ngx, backend, arm)
			rows = append(rows, r)
			t.Logf("%s: %d POSTs in %v: %d ok, %d failed %v; the proxy logged %d GOAWAY errors of %d errors; %d answers of 429; stats %+v",
				arm.name, nginxFlags.requests, r.out.duration.Round(time.Millisecond), r.out.ok, r.out.failed, r.out.failures,
				r.goawayErrors, sum(r.proxyErrors), r.out.retryLater, r.stats)
			for text, n := range r.proxyErrors {
				t.Logf("%s: the proxy logged %d × %s", arm.name, n, text)
			}
			if r.intact != r.out.ok {
				t.Errorf("%d requests answered 200, but %d reached the backend intact exactly once", r.out.ok, r.intact)
			}
			switch arm.mode {
			case "plain":
				if r.out.failed == 0 || r.goawayErrors == 0 {
					t.Errorf("no GOAWAY failure through the plain transport in %d POSTs: nginx's keepalive_requests looks off", nginxFlags.requests)
				}
			default:
				if r.out.failed != 0 {
					t.Errorf("%d failed through teebody's transport: %v", r.out.failed, r.out.failures)
				}
				if r.stats.ReplaysServed == 0 {
					t.Errorf("no replay served: no request met nginx's GOAWAY, so the run proves nothing")
				}
			}
		})
	}
	if n := backend.wrong.Load(); n != 0 {
		t.Errorf("%d bodies reached the backend with bytes that did not match their checksum", n)
	}
	if ngx.exited() {
		t.Errorf("nginx exited during the runs: %v", ngx.waitErr)
	}
	table := nginxTable(rows)
	fmt.Printf("\n%s (%s, HTTP/2 over TLS, default keepalive_requests), %d POSTs of %d bytes from %d clients per proxy:\n\n%s\n",
		filepath.Base(bin), strings.TrimSpace(string(version)), nginxFlags.requests, nginxFlags.bodySize, nginxFlags.concurrency, table)
	writeFile(t, filepath.Join(dir, "table.md"), []byte(table))
}

// runNginxArm starts e2eproxy in the arm's mode in front of ngx, runs the load through it, reads its Stats, stops it
// and reads its log.
func runNginxArm(t *testing.T, proxyBin, dir string, ngx *nginxServer, backend *checkingBackend, arm nginxArm) nginxRow {
	t.Helper()
	addrFile := filepath.Join(dir, "e2eproxy-"+arm.name+".addr")
	if err := os.Remove(addrFile); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	p := startProc(t, dir, "e2eproxy-"+arm.name, proxyBin,
		"-upstream", ngx.url, "-ca", ngx.caFile, "-mode", arm.mode, "-addr-file", addrFile)
	ctx, cancel := context.WithTimeout(t.Context(), nginxRunTimeout)
	defer cancel()
	addr, err := p.waitForFile(ctx, addrFile, ":")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + string(addr)
	out := nginxLoad{arm: arm.name, target: base, requests: nginxFlags.requests, concurrency: nginxFlags.concurrency,
		bodySize: nginxFlags.bodySize, retry429: arm.retry429}.run(ctx)
	if err := ctx.Err(); err != nil {
		t.Fatalf("the load did not end within %v", nginxRunTimeout)
	}
	r := nginxRow{arm: arm, out: out, stats: fetchProxyStats(t, base)}
	p.shutdown(t)
	r.proxyErrors = loggedProxyErrors(t, p.logPath)
	for text, n := range r.proxyErrors {
		if slices.ContainsFunc(goawayTexts, func(s string) bool { return strings.Contains(text, s) }) {
			r.goawayErrors += n
		}
	}
	for _, id := range out.okIDs {
		if backend.arrivals(id) == 1 {
			r.intact++
		}
	}
	return r
}

// fetchProxyStats reads e2eproxy's /_e2e/stats.
func fetchProxyStats(t *testing.T, base string) proxyStats {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/_e2e/stats", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st proxyStats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatalf("/_e2e/stats: %v", err)
	}
	return st
}

// loggedProxyErrors counts the "http: proxy error: ..." lines of a proxy's log by their error text.
func loggedProxyErrors(t *testing.T, logPath string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string]int{}
	for line := range strings.Lines(string(b)) {
		if _, text, ok := strings.Cut(strings.TrimSpace(line), "http: proxy error: "); ok {
			errs[text]++
		}
	}
	return errs
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// nginxTable is the Markdown table of the arms.
func nginxTable(rows []nginxRow) string {
	var b strings.Builder
	b.WriteString("| Go proxy in front of nginx | POSTs | Failed | GOAWAY errors | 429 answers | Replays served | Intact at the backend |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d |\n", r.arm.how, r.out.ok+r.out.failed, r.out.failed,
			r.goawayErrors, r.out.retryLater, r.stats.ReplaysServed, r.intact)
	}
	return b.String()
}

// outDir is the folder for a test's logs and results, which it logs: -out joined with sub (made absolute), else a
// temporary folder.
func outDir(t *testing.T, sub string) string {
	t.Helper()
	dir := t.TempDir()
	if cfg.out != "" {
		var err error
		if dir, err = filepath.Abs(filepath.Join(cfg.out, sub)); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("logs and results in %s", dir)
	return dir
}
