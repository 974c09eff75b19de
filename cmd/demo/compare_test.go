package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/teebody/teebody/cmd/demo/internal/load"
)

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.json")
	b := filepath.Join(dir, "b.json")
	ra := &load.Result{Name: "Direct K8s", TotalOperations: 1000, FailedOperations: 5, GoawayErrors: 5, ErrorRate: 0.5, P50Ms: 200, P95Ms: 300, P99Ms: 400}
	rb := &load.Result{Name: "Proxy (with fix)", TotalOperations: 1000, P50Ms: 201, P95Ms: 300, P99Ms: 400}
	if err := ra.WriteFile(a); err != nil {
		t.Fatal(err)
	}
	if err := rb.WriteFile(b); err != nil {
		t.Fatal(err)
	}

	code, out, _ := runCmd(t, "compare", "-files", a+","+b)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "Direct K8s") || !strings.HasPrefix(lines[2], "Proxy (with fix)") {
		t.Fatalf("table:\n%s", out)
	}

	code, out, _ = runCmd(t, "compare", "-files", a+","+b, "-markdown", "-summary")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	contains(t, "markdown", out,
		"| Direct K8s | 1000 | 5 | 5 | 0.50% | 200ms | 300ms | 400ms |",
		"Proxy (with fix): p50 +0.5%, p95 +0.0%, p99 +0.0%",
		"Direct K8s: 5 of 1000 operations failed (0.50%), 5 of them on a GOAWAY")
}
