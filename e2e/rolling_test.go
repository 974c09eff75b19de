//go:build unix

package e2e

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// rollingFlags are the rolling-restart experiment's knobs; the defaults are the runs recorded in docs/E2E.md.
var rollingFlags struct {
	requests, concurrency, bodySize, upstreams int
	every                                      time.Duration
}

func init() {
	flag.IntVar(&rollingFlags.requests, "rolling-requests", 15000, "POSTs per proxy in the rolling-restart experiment")
	flag.IntVar(&rollingFlags.concurrency, "rolling-concurrency", 32, "concurrent clients in the rolling-restart experiment")
	flag.IntVar(&rollingFlags.bodySize, "rolling-body-size", 1024, "body size in bytes in the rolling-restart experiment")
	flag.IntVar(&rollingFlags.upstreams, "rolling-upstreams", 3, "Go upstreams in the rolling-restart experiment")
	flag.DurationVar(&rollingFlags.every, "rolling-every", 200*time.Millisecond, "time between two restarts in the rolling-restart experiment")
}

// rollingRunTimeout bounds one arm's load (15,000 POSTs take a few seconds).
const rollingRunTimeout = 5 * time.Minute

// rollingArm is one Go proxy put in front of the upstreams.
type rollingArm struct {
	name string
	mode string // e2eproxy -mode
	how  string // for the table
}

// rollingRow is one arm's outcome.
type rollingRow struct {
	arm          rollingArm
	out          loadOutcome
	restarts     int            // upstream restarts during the arm's load
	forced       int            // of them, those whose old server had to be closed after rollingGrace
	goawayErrors int            // the proxy's logged errors that are the GOAWAY failure
	refused      int            // the proxy's logged errors that are a refused connection
	proxyErrors  map[string]int // every error the proxy logged, by text
	stats        proxyStats
	intact       int // requests answered 200 whose body reached an upstream intact, exactly once
	duplicates   int // requests whose body reached the upstreams intact more than once
	lost         int // requests not answered 200 whose body reached an upstream intact all the same
}

// TestRollingRestart puts a Go reverse proxy in front of three Go upstreams (net/http servers, HTTP/2 over TLS)
// that restart one at a time under load, as a rolling update restarts them: a new server starts, then the old one
// shuts down with http.Server.Shutdown, which sends its connections a graceful GOAWAY. The listening socket passes
// from each server to the next, so that no connection is refused and the GOAWAY is all a restart may cost. It sends
// the same POSTs, each with an id and its checksum, through the proxy two ways: over a plain *http.Transport (some
// fail) and over teebody's transport (none may, and none may arrive twice). Every request answered 200 must have
// reached an upstream intact exactly once.
func TestRollingRestart(t *testing.T) {
	if os.Getenv(envRun) != "1" {
		t.Skipf("the end-to-end suite runs real servers: run `make e2e` (or %s=1 go test -run TestRollingRestart -v .) to run it", envRun)
	}
	dir := outDir(t, "rolling")
	proxyBin, err := goBuild(t.Context(), "..", "./internal/cmd/e2eproxy", filepath.Join(dir, "e2eproxy"))
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM := selfSignedCert(t)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "cert.pem")
	writeFile(t, caFile, certPEM)
	logFile, err := os.Create(filepath.Join(dir, "upstreams.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() }) // after the upstreams' cleanups, which run first
	errorLog := log.New(logFile, "", log.LstdFlags|log.Lmicroseconds)

	backend := &checkingBackend{intact: map[string]int{}} // its handler, shared by the upstreams; no server of its own
	var ups []*rollingUpstream
	for range rollingFlags.upstreams {
		u, err := startRollingUpstream(http.HandlerFunc(backend.handle), cert, errorLog)
		if err != nil {
			t.Fatal(err)
		}
		ups = append(ups, u)
		t.Cleanup(func() {
			if err := u.close(); err != nil {
				t.Errorf("upstream %s: %v", u.url, err)
			}
		})
	}

	arms := []rollingArm{
		{name: "plain", mode: "plain", how: "`httputil.ReverseProxy` over a plain `*http.Transport`"},
		{name: "teebody", mode: "teebody", how: "over `transport.New(…, DefaultConfig())`, `ErrorHandler: tr.ErrorHandler`"},
	}
	var rows []rollingRow
	for _, arm := range arms {
		t.Run(arm.name, func(t *testing.T) {
			r := runRollingArm(t, proxyBin, dir, caFile, ups, backend, arm)
			rows = append(rows, r)
			t.Logf("%s: %d POSTs in %v across %d restarts (%d forced): %d ok, %d failed %v (%d of them reached an upstream); "+
				"the proxy logged %d GOAWAY errors and %d refused connections of %d errors; %d duplicates; stats %+v",
				arm.name, rollingFlags.requests, r.out.duration.Round(time.Millisecond), r.restarts, r.forced, r.out.ok, r.out.failed,
				r.out.failures, r.lost, r.goawayErrors, r.refused, sum(r.proxyErrors), r.duplicates, r.stats)
			for text, n := range r.proxyErrors {
				t.Logf("%s: the proxy logged %d × %s", arm.name, n, text)
			}
			if r.restarts == 0 {
				t.Fatalf("no upstream restarted during the load")
			}
			if r.intact != r.out.ok {
				t.Errorf("%d requests answered 200, but %d reached an upstream intact exactly once", r.out.ok, r.intact)
			}
			if r.refused != 0 {
				t.Errorf("the proxy logged %d refused connections: the listening socket must pass from each server to the next", r.refused)
			}
			switch arm.mode {
			case "plain":
				if r.out.failed == 0 || r.goawayErrors == 0 {
					t.Errorf("no GOAWAY failure through the plain transport in %d POSTs across %d restarts: Shutdown's GOAWAY met no request in flight",
						rollingFlags.requests, r.restarts)
				}
			default:
				if r.out.failed != 0 {
					t.Errorf("%d failed through teebody's transport: %v", r.out.failed, r.out.failures)
				}
				if r.duplicates != 0 {
					t.Errorf("%d requests reached the upstreams more than once through teebody's transport", r.duplicates)
				}
				if r.stats.ReplaysServed == 0 {
					t.Errorf("no replay served: no request met a GOAWAY, so the run proves nothing")
				}
			}
		})
	}
	if n := backend.wrong.Load(); n != 0 {
		t.Errorf("%d bodies reached the upstreams with bytes that did not match their checksum", n)
	}
	table := rollingTable(rows)
	fmt.Printf("\n%d Go upstreams (HTTP/2 over TLS), one restarted with http.Server.Shutdown every %v, %d POSTs of %d bytes from %d clients per proxy:\n\n%s\n",
		rollingFlags.upstreams, rollingFlags.every, rollingFlags.requests, rollingFlags.bodySize, rollingFlags.concurrency, table)
	writeFile(t, filepath.Join(dir, "table.md"), []byte(table))
}

// runRollingArm starts e2eproxy in the arm's mode in front of ups, runs the load through it while the upstreams restart
// in turn, reads its Stats, stops it and reads its log.
func runRollingArm(t *testing.T, proxyBin, dir, caFile string, ups []*rollingUpstream, backend *checkingBackend, arm rollingArm) rollingRow {
	t.Helper()
	addrFile := filepath.Join(dir, "e2eproxy-"+arm.name+".addr")
	if err := os.Remove(addrFile); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	args := []string{"-ca", caFile, "-mode", arm.mode, "-addr-file", addrFile}
	for _, u := range ups {
		args = append(args, "-upstream", u.url)
	}
	p := startProc(t, dir, "e2eproxy-"+arm.name, proxyBin, args...)
	ctx, cancel := context.WithTimeout(t.Context(), rollingRunTimeout)
	defer cancel()
	addr, err := p.waitForFile(ctx, addrFile, ":")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + string(addr)

	restarts, forced := 0, 0
	for _, u := range ups {
		restarts, forced = restarts-u.restarts, forced-u.forced
	}
	stop, rolled := make(chan struct{}), make(chan error, 1)
	go func() { rolled <- roll(ups, rollingFlags.every, stop) }()
	out := nginxLoad{arm: "rolling-" + arm.name, target: base, requests: rollingFlags.requests,
		concurrency: rollingFlags.concurrency, bodySize: rollingFlags.bodySize}.run(ctx)
	close(stop)
	if err := <-rolled; err != nil {
		t.Fatalf("restart: %v", err)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("the load did not end within %v", rollingRunTimeout)
	}
	for _, u := range ups {
		restarts, forced = restarts+u.restarts, forced+u.forced
	}

	r := rollingRow{arm: arm, out: out, restarts: restarts, forced: forced, stats: fetchProxyStats(t, base)}
	p.shutdown(t)
	r.proxyErrors = loggedProxyErrors(t, p.logPath)
	for text, n := range r.proxyErrors {
		if slices.ContainsFunc(goawayTexts, func(s string) bool { return strings.Contains(text, s) }) {
			r.goawayErrors += n
		}
		if strings.Contains(text, "connection refused") {
			r.refused += n
		}
	}
	ok := make(map[string]bool, len(out.okIDs))
	for _, id := range out.okIDs {
		ok[id] = true
	}
	backend.mu.Lock()
	defer backend.mu.Unlock()
	for id, n := range backend.intact {
		if !strings.HasPrefix(id, "rolling-"+arm.name+"/") {
			continue
		}
		switch {
		case n > 1:
			r.duplicates++
		case n == 1 && ok[id]:
			r.intact++
		}
		if !ok[id] {
			r.lost++
		}
	}
	return r
}

// roll restarts ups in turn, one every interval, until stop is closed.
func roll(ups []*rollingUpstream, every time.Duration, stop <-chan struct{}) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return nil
		case <-tick.C:
		}
		if err := ups[i%len(ups)].restart(); err != nil {
			return err
		}
	}
}

// rollingTable is the Markdown table of the arms.
func rollingTable(rows []rollingRow) string {
	var b strings.Builder
	b.WriteString("| Go proxy in front of Go upstreams restarting in turn | POSTs | Restarts | Failed | GOAWAY errors | Refused connections | Replays served | Duplicates | Intact at the upstreams | Load time |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %v |\n", r.arm.how, r.out.ok+r.out.failed, r.restarts,
			r.out.failed, r.goawayErrors, r.refused, r.stats.ReplaysServed, r.duplicates, r.intact, r.out.duration.Round(100*time.Millisecond))
	}
	return b.String()
}
