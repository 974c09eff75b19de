//go:build unix

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runTimeout bounds one load run (a run at QPS 100 takes about 10 s; one through the 429 path waits a second per
// refused replay).
const runTimeout = 10 * time.Minute

// result is what `demo load -output` writes (load.Result in cmd/demo/internal/load/result.go); fields the suite
// does not read are left out.
type result struct {
	Name                 string   `json:"name"`
	DurationSeconds      float64  `json:"duration_seconds"`
	TotalOperations      int      `json:"total_operations"`
	SuccessfulOperations int      `json:"successful_operations"`
	FailedOperations     int      `json:"failed_operations"`
	GoawayErrors         int      `json:"goaway_errors"`
	ServerVersion        string   `json:"server_version"`
	APIServerURL         string   `json:"api_server_url"`
	SampleErrors         []string `json:"sample_errors"`
}

// buildDemo builds ../cmd/demo (a module of its own) into dir and returns the binary's path. ctx's end stops the
// build.
func buildDemo(ctx context.Context, dir string) (string, error) {
	return goBuild(ctx, filepath.Join("..", "cmd", "demo"), ".", filepath.Join(dir, "demo"))
}

// goBuild builds the package pkg of the module in the folder src (relative to this one) into bin and returns bin.
// ctx's end stops the build.
func goBuild(ctx context.Context, src, pkg, bin string) (string, error) {
	src, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err != nil {
		return "", fmt.Errorf("the module at %s is missing: %w", src, err)
	}
	cmd := exec.CommandContext(ctx, goCommand(), "build", "-o", bin, pkg)
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s in %s: %w\n%s", pkg, src, err, out)
	}
	return bin, nil
}

// goCommand is the go command that runs this test, so the demo is built with the same toolchain.
func goCommand() string {
	if goroot := os.Getenv("GOROOT"); goroot != "" {
		if p := filepath.Join(goroot, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// loadRun is one `demo load` invocation.
type loadRun struct {
	name       string // the run's name in the table; also the namespace's
	kubeconfig string
	qps        int
	noRetry    bool // -no-retry: GetBody cleared and client-go's retries off
}

// runLoad runs `demo load` to its end and returns its result. Exit status 1 (some operation failed) is a result,
// not an error; anything else fails the test.
func runLoad(t *testing.T, demo, dir string, cfg config, r loadRun) result {
	t.Helper()
	out := filepath.Join(dir, r.name+".json")
	args := []string{"load",
		"-kubeconfig", r.kubeconfig,
		"-namespace", r.name,
		"-workers", strconv.Itoa(cfg.workers),
		"-ops", strconv.Itoa(cfg.ops),
		"-body-size", strconv.Itoa(cfg.bodySize),
		"-qps", strconv.Itoa(r.qps),
		"-name", r.name,
		"-output", out,
		"-quiet",
	}
	if r.noRetry {
		args = append(args, "-no-retry")
	}
	p := startProc(t, dir, "load-"+r.name, demo, args...)
	timer := time.NewTimer(runTimeout)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		p.stop(t)
		t.Fatalf("demo load %s did not end within %v; log %s:\n%s", r.name, runTimeout, p.logPath, tail(p.logPath, 20))
	}
	if code := exitCode(p.waitErr); code != 0 && code != 1 {
		t.Fatalf("demo load %s: %v; log %s:\n%s", r.name, p.waitErr, p.logPath, tail(p.logPath, 20))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("demo load %s wrote no result: %v; log:\n%s", r.name, err, tail(p.logPath, 20))
	}
	var res result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("demo load %s: %s: %v", r.name, out, err)
	}
	if res.TotalOperations != cfg.workers*cfg.ops || res.SuccessfulOperations+res.FailedOperations != res.TotalOperations {
		t.Fatalf("demo load %s: %d operations (%d ok, %d failed), want %d×%d", r.name,
			res.TotalOperations, res.SuccessfulOperations, res.FailedOperations, cfg.workers, cfg.ops)
	}
	if (exitCode(p.waitErr) == 1) != (res.FailedOperations > 0) {
		t.Errorf("demo load %s exited with %v but reports %d failed operations", r.name, p.waitErr, res.FailedOperations)
	}
	t.Logf("%s: %d of %d operations failed (%d GOAWAY) in %.1fs against %s %s", r.name, res.FailedOperations,
		res.TotalOperations, res.GoawayErrors, res.DurationSeconds, res.APIServerURL, res.ServerVersion)
	for _, e := range res.SampleErrors {
		t.Logf("%s: sample error: %s", r.name, e)
	}
	return res
}

// exitCode is the exit status in err from exec.Cmd.Wait: 0 for nil, -1 if the process did not exit normally.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	default:
		return -1
	}
}

// demoProxy is a running `demo proxy`.
type demoProxy struct {
	*proc
	kubeconfig string // written by the proxy once it listens: its URL, a bearer token, its CA
}

// startProxy starts `demo proxy` in front of the upstream kubeconfig with extra flags, and waits until it has
// written its kubeconfig (the contract says it does so only once it is listening).
func startProxy(t *testing.T, demo, dir, name, upstream string, extra ...string) *demoProxy {
	t.Helper()
	kubeconfig := filepath.Join(dir, name+".kubeconfig")
	if err := os.Remove(kubeconfig); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	args := append([]string{"proxy", "-kubeconfig", upstream, "-listen", "127.0.0.1:0", "-write-kubeconfig", kubeconfig}, extra...)
	p := startProc(t, dir, "proxy-"+name, demo, args...)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := p.waitForFile(ctx, kubeconfig, "server:"); err != nil {
		t.Fatal(err)
	}
	return &demoProxy{proc: p, kubeconfig: kubeconfig}
}

// shutdown stops the process with SIGTERM and checks that it had not died before and that it shut down cleanly, as
// the demo's CLI contract says of demo proxy.
func (p *proc) shutdown(t *testing.T) {
	t.Helper()
	if p.exited() {
		t.Errorf("%s exited during the run: %v; log %s:\n%s", p.name, p.waitErr, p.logPath, tail(p.logPath, 20))
		return
	}
	p.stop(t)
	if p.waitErr != nil {
		t.Errorf("%s on SIGTERM: %v, want a clean exit; log %s:\n%s", p.name, p.waitErr, p.logPath, tail(p.logPath, 20))
	}
}

// serverKey, tokenKey and caKey read the server URL, the token and the CA data out of a one-cluster kubeconfig.
// The suite depends on nothing from Kubernetes, so it reads the three keys by name.
var (
	serverKey = regexp.MustCompile(`(?m)^\s*server:\s*"?([^"\s]+)"?\s*$`)
	tokenKey  = regexp.MustCompile(`(?m)^\s*token:\s*"?([^"\s]+)"?\s*$`)
	caKey     = regexp.MustCompile(`(?m)^\s*certificate-authority-data:\s*"?([^"\s]+)"?\s*$`)
)

// metrics fetches the proxy's Prometheus /metrics (served on its listener, with its own token and CA) and returns
// the samples by name (labels included), e.g. "teebody_replays_served_total".
func (p *demoProxy) metrics(t *testing.T) map[string]float64 {
	t.Helper()
	client, server, closeClient := p.client(t)
	defer closeClient()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, server+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET proxy /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		t.Fatalf("GET proxy /metrics: %s: %s", resp.Status, body)
	}
	return parseMetrics(t, resp.Body)
}

// client returns an HTTP/2 client of the proxy (its token, trusting only its CA), the proxy's URL without a
// trailing slash, and a function that closes the client's idle connections.
func (p *demoProxy) client(t *testing.T) (*http.Client, string, func()) {
	t.Helper()
	b, err := os.ReadFile(p.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	server, token, ca := serverKey.FindSubmatch(b), tokenKey.FindSubmatch(b), caKey.FindSubmatch(b)
	if server == nil || token == nil || ca == nil {
		t.Fatalf("%s lacks server, token or certificate-authority-data:\n%s", p.kubeconfig, b)
	}
	caPEM, err := base64.StdEncoding.DecodeString(string(ca[1]))
	if err != nil {
		t.Fatalf("%s: certificate-authority-data: %v", p.kubeconfig, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("%s: no certificate in certificate-authority-data", p.kubeconfig)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true}
	client := &http.Client{Transport: bearer{string(token[1]), tr}, Timeout: 30 * time.Second}
	return client, strings.TrimRight(string(server[1]), "/"), tr.CloseIdleConnections
}

// parseMetrics reads Prometheus text exposition: one sample a line, "name{labels} value [timestamp]".
func parseMetrics(t *testing.T, r io.Reader) map[string]float64 {
	t.Helper()
	m := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// Label values may hold spaces, so the name ends at the closing brace when there is one.
		name, rest := line, ""
		if i := strings.LastIndexByte(line, '}'); i >= 0 {
			name, rest = line[:i+1], line[i+1:]
		} else if i := strings.IndexByte(line, ' '); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			t.Fatalf("metrics: no value in %q", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			t.Fatalf("metrics: %q: %v", line, err)
		}
		m[name] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("metrics: %v", err)
	}
	return m
}

// compare runs `demo compare -markdown` over the result files and returns the table.
func compare(t *testing.T, demo string, files []string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), demo, "compare", "-files", strings.Join(files, ","), "-markdown")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("demo compare: %v\n%s", err, stderr.String())
	}
	return string(out)
}

// sumMetric adds up every sample of the named metric, whatever its labels.
func sumMetric(m map[string]float64, name string) (float64, bool) {
	var sum float64
	found := false
	for k, v := range m {
		if k == name || strings.HasPrefix(k, name+"{") {
			sum += v
			found = true
		}
	}
	return sum, found
}

func (r result) String() string {
	return fmt.Sprintf("%s: %d/%d failed, %d GOAWAY", r.Name, r.FailedOperations, r.TotalOperations, r.GoawayErrors)
}
