//go:build unix

package e2e

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// traefikFlags are the Traefik experiment's knobs; the defaults are the runs recorded in docs/traefik.md.
var traefikFlags struct {
	small, large, concurrency, keepaliveRequests int
}

func init() {
	flag.IntVar(&traefikFlags.small, "traefik-requests-1k", 5000, "POSTs of 1 KiB per Traefik arm (0 skips that load)")
	flag.IntVar(&traefikFlags.large, "traefik-requests-256k", 1000, "POSTs of 256 KiB per Traefik arm (0 skips that load)")
	flag.IntVar(&traefikFlags.concurrency, "traefik-concurrency", 16, "concurrent clients in the Traefik experiment")
	flag.IntVar(&traefikFlags.keepaliveRequests, "traefik-keepalive-requests", 100, "nginx's keepalive_requests in the Traefik experiment")
}

// traefikLoadTimeout bounds one load (5,000 POSTs of 1 KiB or 1,000 of 256 KiB take seconds).
const traefikLoadTimeout = 5 * time.Minute

// traefikDynamic is the file provider's configuration: one router on the entry point "web" that sends everything
// to the servers (%[1]s, lines of "- url: ..."), over HTTP/2 and TLS, trusting the certificate in the file %[2]q.
const traefikDynamic = `http:
  routers:
    upstreams:
      entryPoints: [web]
      rule: "PathPrefix(` + "`/`" + `)"
      service: upstreams
  services:
    upstreams:
      loadBalancer:
        serversTransport: upstreams
        servers:
%[1]s  serversTransports:
    upstreams:
      rootCAs:
        - %[2]q
`

// traefikUpstream is what Traefik forwards to in one arm.
type traefikUpstream struct {
	name   string
	how    string   // for the table
	urls   []string // the servers
	caFile string   // their certificate
	rolls  []*rollingUpstream
}

// traefikRow is one load through one Traefik binary in front of one upstream.
type traefikRow struct {
	build, upstream string
	upstreamHow     string // for the table
	bodySize        int
	out             loadOutcome
	restarts        int // upstream restarts during the load (rolling only)
	goawayErrors    int // errors Traefik logged that are the GOAWAY failure
	ids             idTally
}

// idTally is what the upstreams saw of one load's request ids.
type idTally struct {
	intact     int // answered 200 and arrived intact exactly once
	duplicates int // arrived intact more than once
	applied    int // not answered 200, yet arrived intact
}

// TestTraefik runs a real Traefik (e2e/bin/traefik, v3.6.12 as released, and e2e/bin/traefik-patched, the same
// with e2e/traefik/traefik.patch; build-traefik.sh builds both), configured by its file provider, in front of two
// kinds of HTTP/2 upstream over TLS: three Go servers restarted in turn with http.Server.Shutdown (as
// TestRollingRestart's), and nginx with a low keepalive_requests (as TestNginx's). It sends POSTs of 1 KiB and of
// 256 KiB, each with an id and a checksum, and the client sends a 429'd request again after its Retry-After.
// Stock Traefik must fail some before each upstream (it answers 500), or the experiment proves nothing; patched
// Traefik none. Every request answered 200 must have reached an upstream intact exactly once, and through patched Traefik
// no request may reach them twice.
func TestTraefik(t *testing.T) {
	if os.Getenv(envRun) != "1" {
		t.Skipf("the end-to-end suite runs real servers: run `make e2e` (or ./build-traefik.sh, then %s=1 go test -run TestTraefik -v .) to run it", envRun)
	}
	nginxBin := findNginx(t)
	builds := []struct{ name, bin string }{{"stock", binary(t, "traefik")}, {"patched", binary(t, "traefik-patched")}}
	dir := outDir(t, "traefik")
	for _, b := range builds {
		version, err := exec.Command(b.bin, "version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s version: %v: %s", b.bin, err, version)
		}
		t.Logf("%s: %s", b.bin, strings.Join(strings.Fields(string(version)), " "))
	}

	backend := newCheckingBackend(t)
	ngxDir := filepath.Join(dir, "nginx")
	if err := os.MkdirAll(ngxDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ngx := startNginxWith(t, nginxBin, ngxDir, backend.addr(), fmt.Sprintf("keepalive_requests %d;", traefikFlags.keepaliveRequests))
	rolling := startTraefikRolling(t, dir, backend)
	upstreams := []traefikUpstream{
		rolling,
		{name: "nginx", how: fmt.Sprintf("nginx, `keepalive_requests %d`", traefikFlags.keepaliveRequests),
			urls: []string{ngx.url}, caFile: ngx.caFile},
	}

	var rows []traefikRow
	for _, b := range builds {
		for _, up := range upstreams {
			t.Run(b.name+"/"+up.name, func(t *testing.T) {
				p, base := startTraefik(t, b.bin, dir, "traefik-"+b.name+"-"+up.name, up)
				for _, load := range []struct{ size, requests int }{{1 << 10, traefikFlags.small}, {256 << 10, traefikFlags.large}} {
					if load.requests == 0 {
						continue
					}
					t.Run(fmt.Sprintf("%dKiB", load.size>>10), func(t *testing.T) {
						r := runTraefikLoad(t, p, base, backend, up, b.name, load.size, load.requests)
						rows = append(rows, r)
						checkTraefikRow(t, r)
					})
				}
			})
		}
	}
	checkStockFailed(t, rows)
	if n := backend.wrong.Load(); n != 0 {
		t.Errorf("%d bodies reached the upstreams with bytes that did not match their checksum", n)
	}
	if ngx.exited() {
		t.Errorf("nginx exited during the runs: %v", ngx.waitErr)
	}
	table := traefikTable(rows)
	fmt.Printf("\nTraefik in front of HTTP/2 upstreams over TLS, %d clients, the client resending a 429 after Retry-After:\n\n%s\n",
		traefikFlags.concurrency, table)
	writeFile(t, filepath.Join(dir, "table.md"), []byte(table))
}

// checkTraefikRow logs a load's outcome and checks it.
func checkTraefikRow(t *testing.T, r traefikRow) {
	t.Helper()
	t.Logf("%s Traefik, %s, %d B: %d POSTs in %v (%d upstream restarts): %d ok, %d failed %v; %d answers of 429; "+
		"Traefik logged %d GOAWAY errors; at the upstreams: %d intact once, %d twice or more, %d failed yet applied",
		r.build, r.upstream, r.bodySize, r.out.ok+r.out.failed, r.out.duration.Round(time.Millisecond), r.restarts,
		r.out.ok, r.out.failed, r.out.failures, r.out.retryLater, r.goawayErrors, r.ids.intact, r.ids.duplicates, r.ids.applied)
	if r.ids.intact != r.out.ok {
		t.Errorf("%d requests answered 200, but %d reached an upstream intact exactly once", r.out.ok, r.ids.intact)
	}
	switch r.build {
	case "stock":
		for failure, n := range r.out.failures {
			if !strings.HasPrefix(failure, "500 ") {
				t.Logf("stock Traefik answered %d requests otherwise than 500: %s", n, failure)
			}
		}
	default:
		if r.out.failed != 0 {
			t.Errorf("%d failed through patched Traefik: %v", r.out.failed, r.out.failures)
		}
		if r.ids.duplicates != 0 {
			t.Errorf("%d requests reached the upstreams more than once through patched Traefik", r.ids.duplicates)
		}
		if r.goawayErrors != 0 {
			t.Errorf("patched Traefik logged %d GOAWAY errors", r.goawayErrors)
		}
	}
}

// checkStockFailed fails t unless stock Traefik failed some writes with the GOAWAY error before each upstream, over
// its loads: otherwise the upstream's GOAWAY met no request in flight, and the run proves nothing. (One load alone
// may miss: the rolling upstreams' 1 KiB load has failed 5 writes in 5,000.)
func checkStockFailed(t *testing.T, rows []traefikRow) {
	t.Helper()
	failed, logged := map[string]int{}, map[string]int{}
	for _, r := range rows {
		if r.build == "stock" {
			failed[r.upstream] += r.out.failed
			logged[r.upstream] += r.goawayErrors
		}
	}
	for up, n := range failed {
		if n == 0 || logged[up] == 0 {
			t.Errorf("no GOAWAY failure through stock Traefik before %s (%d failed, %d GOAWAY errors logged): the run proves nothing",
				up, n, logged[up])
		}
	}
}

// startTraefikRolling starts rollingFlags.upstreams Go upstreams, HTTP/2 over TLS on loopback, serving backend's
// handler, and /_ready with 204 for startTraefik's wait. Each test's cleanup closes them.
func startTraefikRolling(t *testing.T, dir string, backend *checkingBackend) traefikUpstream {
	t.Helper()
	certPEM, keyPEM := selfSignedCert(t)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	up := traefikUpstream{name: "rolling",
		how:    fmt.Sprintf("%d Go servers, one restarted with `Shutdown` every %v", rollingFlags.upstreams, rollingFlags.every),
		caFile: filepath.Join(dir, "upstreams-cert.pem")}
	writeFile(t, up.caFile, certPEM)
	logFile, err := os.Create(filepath.Join(dir, "upstreams.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() }) // after the upstreams' cleanups, which run first
	errorLog := log.New(logFile, "", log.LstdFlags|log.Lmicroseconds)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_ready", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/", backend.handle)
	for range rollingFlags.upstreams {
		u, err := startRollingUpstream(mux, cert, errorLog)
		if err != nil {
			t.Fatal(err)
		}
		up.rolls = append(up.rolls, u)
		up.urls = append(up.urls, u.url)
		t.Cleanup(func() {
			if err := u.close(); err != nil {
				t.Errorf("upstream %s: %v", u.url, err)
			}
		})
	}
	return up
}

// startTraefik starts bin with an entry point on a free loopback port and the file provider's configuration for up,
// and waits until a GET of /_ready through it reaches the upstream. It returns the process and its base URL; the
// test's cleanup stops it.
func startTraefik(t *testing.T, bin, dir, name string, up traefikUpstream) (*proc, string) {
	t.Helper()
	var servers strings.Builder
	for _, u := range up.urls {
		fmt.Fprintf(&servers, "          - url: %q\n", u)
	}
	dynamic := filepath.Join(dir, name+".yml")
	writeFile(t, dynamic, fmt.Appendf(nil, traefikDynamic, servers.String(), up.caFile))
	home := filepath.Join(dir, name+".home") // its working folder: no traefik.yml there, nor in its HOME
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin,
		"--global.checkNewVersion=false",
		"--global.sendAnonymousUsage=false",
		"--entryPoints.web.address="+addr,
		"--entryPoints.web.transport.lifeCycle.graceTimeOut=5s",
		"--providers.file.filename="+dynamic,
		"--providers.file.watch=false",
		"--log.level=DEBUG", // Traefik logs each error it answers at DEBUG, with its error
	)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home)
	p := startCmd(t, dir, name, cmd)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	base := "http://" + addr
	err := p.waitReady(ctx, "the upstream's answer through Traefik", base)
	if err != nil {
		t.Fatal(err)
	}
	return p, base
}

// runTraefikLoad sends requests POSTs of size bytes through Traefik at base, restarting up's Go servers in turn
// meanwhile if it has them, and reads what Traefik logged during the load and what the upstreams received.
func runTraefikLoad(t *testing.T, p *proc, base string, backend *checkingBackend, up traefikUpstream, build string, size, requests int) traefikRow {
	t.Helper()
	logStart := fileSize(t, p.logPath)
	restarts := 0
	for _, u := range up.rolls {
		restarts -= u.restarts
	}
	ctx, cancel := context.WithTimeout(t.Context(), traefikLoadTimeout)
	defer cancel()
	stop, rolled := make(chan struct{}), make(chan error, 1)
	if len(up.rolls) > 0 {
		go func() { rolled <- roll(up.rolls, rollingFlags.every, stop) }()
	} else {
		rolled <- nil
	}
	arm := fmt.Sprintf("traefik-%s-%s-%dk", build, up.name, size>>10)
	out := nginxLoad{arm: arm, target: base, requests: requests, concurrency: traefikFlags.concurrency,
		bodySize: size, retry429: true}.run(ctx)
	close(stop)
	if err := <-rolled; err != nil {
		t.Fatalf("restart: %v", err)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("the load did not end within %v", traefikLoadTimeout)
	}
	for _, u := range up.rolls {
		restarts += u.restarts
	}
	if len(up.rolls) > 0 && restarts == 0 {
		t.Fatalf("no upstream restarted during the load")
	}
	r := traefikRow{build: build, upstream: up.name, upstreamHow: up.how, bodySize: size, out: out, restarts: restarts,
		ids: tallyIDs(backend, arm+"/", out.okIDs)}
	for line := range strings.Lines(readFrom(t, p.logPath, logStart)) {
		if slices.ContainsFunc(goawayTexts, func(s string) bool { return strings.Contains(line, s) }) {
			r.goawayErrors++
		}
	}
	return r
}

// tallyIDs counts what the backend received of the ids that start with prefix, okIDs being those answered 200.
func tallyIDs(backend *checkingBackend, prefix string, okIDs []string) idTally {
	ok := make(map[string]bool, len(okIDs))
	for _, id := range okIDs {
		ok[id] = true
	}
	var c idTally
	backend.mu.Lock()
	defer backend.mu.Unlock()
	for id, n := range backend.intact {
		if !strings.HasPrefix(id, prefix) || n == 0 {
			continue
		}
		switch {
		case n > 1:
			c.duplicates++
		case ok[id]:
			c.intact++
		}
		if !ok[id] {
			c.applied++
		}
	}
	return c
}

// fileSize returns the size of the file at path.
func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// readFrom returns the file at path from offset on.
func readFrom(t *testing.T, path string, offset int64) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, offset, 1<<62))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// traefikTable is the Markdown table of the loads.
func traefikTable(rows []traefikRow) string {
	var b strings.Builder
	b.WriteString("| Traefik v3.6.12 | Upstream | Body | POSTs | Failed | Failed by status | GOAWAY errors logged | 429 answers (resent) | Twice at the upstreams | Intact once | Load time |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		statuses := map[string]int{}
		for failure, n := range r.out.failures {
			status, _, _ := strings.Cut(failure, " ")
			statuses[status] += n
		}
		var by []string
		for _, s := range slices.Sorted(maps.Keys(statuses)) {
			by = append(by, fmt.Sprintf("%d × %s", statuses[s], s))
		}
		fmt.Fprintf(&b, "| %s | %s | %d KiB | %d | %d | %s | %d | %d | %d | %d | %v |\n", r.build, r.upstreamHow, r.bodySize>>10,
			r.out.ok+r.out.failed, r.out.failed, strings.Join(by, ", "), r.goawayErrors, r.out.retryLater, r.ids.duplicates,
			r.ids.intact, r.out.duration.Round(100*time.Millisecond))
	}
	return b.String()
}
