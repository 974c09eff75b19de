package main

import (
	"path/filepath"
	"testing"
)

// contractFields are the result JSON fields the end-to-end suite reads.
var contractFields = []string{"name", "start", "end", "duration_seconds", "total_operations", "successful_operations",
	"failed_operations", "goaway_errors", "error_rate", "goaway_rate", "workers", "ops_per_worker", "context",
	"server_version", "api_server_url", "p50_ms", "p95_ms", "p99_ms", "sample_errors"}

func TestLoadSucceeds(t *testing.T) {
	up := startServer(t, "upstream", "-goaway-chance", "0")
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runCmd(t, "load", "-kubeconfig", up.kubeconfig, "-namespace", "fresh", "-workers", "3", "-ops", "4",
		"-body-size", "2KiB", "-qps", "-1", "-name", "mine", "-output", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	contains(t, "stdout", stdout, "Test Configuration", "mine")
	contains(t, "stderr", stderr, "mine: 12/12 operations (100%), 0 failed")
	m := readJSON(t, out)
	for _, f := range contractFields {
		if _, ok := m[f]; !ok {
			t.Errorf("result lacks %q", f)
		}
	}
	if m["total_operations"] != 12.0 || m["failed_operations"] != 0.0 || m["workers"] != 3.0 || m["ops_per_worker"] != 4.0 ||
		m["name"] != "mine" || m["context"] != "teebody-upstream" {
		t.Fatalf("result = %v", m)
	}
}

// TestLoadNoRetryFails: through GOAWAYs with GetBody cleared, operations
// fail, are counted as GOAWAY failures, and the exit status is 1; the
// refusing upstream's GOAWAYs refuse writes on every run.
func TestLoadNoRetryFails(t *testing.T) {
	up := startServerCLI(t, &cli{upstream: refusingUpstream}, "upstream")
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runCmd(t, "load", "-kubeconfig", up.kubeconfig, "-workers", "10", "-ops", "10", "-qps", "-1",
		"-no-retry", "-quiet", "-output", out)
	if code != exitFail {
		t.Fatalf("exit %d, want 1: %s%s", code, stdout, stderr)
	}
	if stderr != "" {
		t.Errorf("-quiet, yet stderr = %q", stderr)
	}
	contains(t, "stdout", stdout, "error: ")
	m := readJSON(t, out)
	if m["goaway_errors"].(float64) == 0 || m["no_retry"] != true {
		t.Fatalf("result = %v", m)
	}
}

func TestLoadSetupFails(t *testing.T) {
	up := startServer(t, "upstream", "-goaway-chance", "0")
	code, _, stderr := runCmd(t, "load", "-kubeconfig", up.kubeconfig, "-namespace", "Not_A_Name", "-ops", "1", "-quiet")
	if code != exitFail {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	contains(t, "stderr", stderr, "demo load: load: setup: create namespace Not_A_Name")
}
