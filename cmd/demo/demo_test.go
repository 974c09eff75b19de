package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/teebody/teebody/cmd/demo/internal/load"
)

// TestFourWay runs "demo" at reduced size, with GOAWAYs frequent so that
// the small run shows them, and checks the shape of the result: failures
// without the fix, directly and through the proxy, and none with it, on
// the replay path or the 429 path.
func TestFourWay(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCmd(t, "-workers", "10", "-ops", "15", "-goaway-chance", "0.15", "-quiet", "-out", dir)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(strings.Join(strings.Fields(stdout), " "), "Test Configuration Total Ops Failed GOAWAY Error Rate p50 p95 p99") {
		t.Errorf("no table header:\n%s", stdout)
	}
	contains(t, "stdout", stdout,
		"Latency against Direct K8s", "Findings:", "PASS: the fixed proxy let no failure through.")
	results := map[string]*load.Result{}
	for _, f := range []string{"direct", "proxy-no-fix", "proxy-fix", "proxy-fix-small-budget"} {
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
	for _, f := range []string{"proxy-fix", "proxy-fix-small-budget"} {
		if r := results[f]; r.FailedOperations != 0 {
			t.Errorf("%s: %d failed with the fix: %q", f, r.FailedOperations, r.SampleErrors)
		}
	}
	if !results["direct"].NoRetry || results["proxy-fix-small-budget"].NoRetry {
		t.Error("the 429 path must run with client-go's retries, the others without GetBody")
	}
	// The 429 path was taken: the findings count the 429s, and there were some.
	i := strings.Index(stdout, "the proxy answered 429 (Retry-After 1s) ")
	if i < 0 || strings.HasPrefix(stdout[i+len("the proxy answered 429 (Retry-After 1s) "):], "0 times") {
		t.Errorf("no 429 in the findings:\n%s", stdout)
	}
}
