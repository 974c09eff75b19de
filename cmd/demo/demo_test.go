package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/teebody/teebody/cmd/demo/internal/load"
	"github.com/teebody/teebody/pkg/transport"
)

// TestFiveWay runs "demo" at reduced size against the refusing upstream,
// whose GOAWAYs refuse writes on every run, and checks the shape of the
// result: failures without the fix, directly and through the proxy, and
// none with it, on the replay path, the 429 path or in adaptive mode. This
// is the demo's one test of the failure and the fix side by side.
func TestFiveWay(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, &cli{upstream: refusingUpstream}, "-workers", "10", "-ops", "15", "-quiet", "-out", dir)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(strings.Join(strings.Fields(stdout), " "), "Test Configuration Total Ops Failed GOAWAY Error Rate p50 p95 p99") {
		t.Errorf("no table header:\n%s", stdout)
	}
	contains(t, "stdout", stdout,
		"Findings:", "- Latency: each configuration ran once",
		"docs/BENCHMARKS.md", "PASS: the fixed proxy let no failure through.")
	results := map[string]*load.Result{}
	for _, f := range []string{"direct", "proxy-no-fix", "proxy-fix", "proxy-fix-small-budget", "proxy-adaptive"} {
		r, err := load.ReadFile(filepath.Join(dir, f+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if r.TotalOperations != 150 {
			t.Fatalf("%s: %d operations, want 150", f, r.TotalOperations)
		}
		if !strings.Contains(stdout, "\n"+r.Name+" ") {
			t.Errorf("no row for %q", r.Name)
		}
		results[f] = r
	}
	for _, f := range []string{"direct", "proxy-no-fix"} {
		if r := results[f]; r.GoawayErrors == 0 {
			t.Errorf("%s: %d failed, %d on a GOAWAY; want GOAWAY failures: %q", f, r.FailedOperations, r.GoawayErrors, r.SampleErrors)
		}
	}
	for _, f := range []string{"proxy-fix", "proxy-fix-small-budget", "proxy-adaptive"} {
		if r := results[f]; r.FailedOperations != 0 {
			t.Errorf("%s: %d failed with the fix: %q", f, r.FailedOperations, r.SampleErrors)
		}
	}
	if !results["direct"].NoRetry || results["proxy-fix-small-budget"].NoRetry || results["proxy-adaptive"].NoRetry {
		t.Error("the 429 path and adaptive mode must run with client-go's retries, the others without GetBody")
	}
	// Adaptive mode kept the 1 KiB bodies up to its floor before the first
	// trace of GOAWAY, so that trace cost no 429; then it buffered as always-on.
	st := readStats(t, dir, "proxy-adaptive")
	if st.AdaptiveTraces == 0 || st.BufferedQuiet == 0 || st.Buffered <= st.BufferedQuiet || st.PassedThrough.Quiet != 0 || st.RetryLaterWritten != 0 {
		t.Errorf("adaptive: traces %d, buffered %d, of them quiet %d, passed through %d, 429s %d; want > 0, > quiet, > 0, 0, 0",
			st.AdaptiveTraces, st.Buffered, st.BufferedQuiet, st.PassedThrough.Quiet, st.RetryLaterWritten)
	}
	contains(t, "stdout", stdout, "In adaptive mode, with client-go's retries: 0 failed;")
	if !strings.Contains(strings.Join(strings.Fields(stdout), " "),
		"Proxy Buffered of them quiet Unbuffered (quiet) Replays Needed a replay Most attempts 429s Peak held") {
		t.Errorf("no proxy table:\n%s", stdout)
	}
	// The always-on proxy replayed writes refused by a GOAWAY, as their Reports
	// say: some requests needed a replay, and one took two attempts or more.
	row := proxyRow(stdout, "Proxy (with fix)")
	if len(row) != 8 {
		t.Fatalf("the fix's proxy row %q: want 8 cells:\n%s", row, stdout)
	}
	replayed, err1 := strconv.Atoi(row[4])
	most, err2 := strconv.Atoi(row[5])
	if err1 != nil || err2 != nil || replayed == 0 || most < 2 {
		t.Errorf("the fix's proxy row %q: %d requests needed a replay, most attempts %d; want > 0 and >= 2", row, replayed, most)
	}
	contains(t, "stdout", stdout, fmt.Sprintf("it replayed the bodies of %d requests after GOAWAYs, in at most %d attempts for one,", replayed, most))
	// The 429 path was taken: the findings count the 429s, and there were some.
	i := strings.Index(stdout, "the proxy answered 429 (Retry-After 1s) ")
	if i < 0 || strings.HasPrefix(stdout[i+len("the proxy answered 429 (Retry-After 1s) "):], "0 times") {
		t.Errorf("no 429 in the findings:\n%s", stdout)
	}
}

// TestNoGoawayAdaptiveHoldsLittle: with -goaway-chance 0 and ConfigMaps
// above the adaptive floor (64 KiB), the always-on proxy holds whole
// bodies, and the adaptive one passes them through, keeping only the small
// bodies (DeleteOptions, the namespace) up to its floor.
func TestNoGoawayAdaptiveHoldsLittle(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCmd(t, "-workers", "4", "-ops", "10", "-body-size", "100KiB", "-goaway-chance", "0", "-quiet", "-out", dir)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	fix, adaptive := readStats(t, dir, "proxy-fix"), readStats(t, dir, "proxy-adaptive")
	if fix.PeakBytesHeld < 100<<10 || fix.Buffered == 0 {
		t.Errorf("always-on: peak held %d, buffered %d; want at least a body, > 0", fix.PeakBytesHeld, fix.Buffered)
	}
	// 40 creates above the floor; 40 deletes and the namespace below it, a
	// few at once, each charged a small chunk: less than one ConfigMap.
	if adaptive.PassedThrough.Quiet != 40 || adaptive.BufferedQuiet != 41 || adaptive.PeakBytesHeld >= 100<<10 {
		t.Errorf("adaptive: passed through %d, kept %d, peak held %d; want 40, 41, < 100KiB",
			adaptive.PassedThrough.Quiet, adaptive.BufferedQuiet, adaptive.PeakBytesHeld)
	}
	contains(t, "stdout", stdout, "it saw no GOAWAY, so it kept 41 bodies of at most its floor of 64KiB and passed 40 larger ones through unbuffered;",
		"Through the proxy with the fix: 0 failed; no request needed a replay, holding at most")
}

// proxyRow returns the cells after the name of the proxy table's row for
// name: the table's last line that begins with it.
func proxyRow(stdout, name string) []string {
	var row []string
	for l := range strings.Lines(stdout) {
		if rest, ok := strings.CutPrefix(l, name+" "); ok {
			row = strings.Fields(rest)
		}
	}
	return row
}

// readStats reads the transport Stats that "demo -out DIR" saved for a stage.
func readStats(t *testing.T, dir, stage string) transport.Stats {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, stage+".stats.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st transport.Stats
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	return st
}
