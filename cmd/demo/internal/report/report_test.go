package report_test

import (
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/teebody/teebody/cmd/demo/internal/load"
	"github.com/teebody/teebody/cmd/demo/internal/report"
	"github.com/teebody/teebody/pkg/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var results = []*load.Result{
	{Name: "Direct K8s", TotalOperations: 1000, FailedOperations: 5, GoawayErrors: 5, ErrorRate: 0.5, P50Ms: 10, P95Ms: 20, P99Ms: 40},
	{Name: "Proxy (with fix)", TotalOperations: 1000, ErrorRate: 0, P50Ms: 11, P95Ms: 19, P99Ms: 140},
}

func TestTable(t *testing.T) {
	var b strings.Builder
	if err := report.Table(&b, results, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), b.String())
	}
	if f := strings.Fields(lines[1]); strings.Join(f, " ") != "Direct K8s 1000 5 5 0.50% 10.0ms 20.0ms 40.0ms" {
		t.Fatalf("row = %q", lines[1])
	}
	// Columns align: "Total Ops" starts at the same offset on every line.
	at := strings.Index(lines[0], "Total Ops")
	for _, l := range lines[1:] {
		if l[at-2:at] != "  " || l[at] == ' ' {
			t.Fatalf("misaligned:\n%s", b.String())
		}
	}
}

func TestMarkdown(t *testing.T) {
	var b strings.Builder
	if err := report.Table(&b, results, true); err != nil {
		t.Fatal(err)
	}
	want := "| Test Configuration | Total Ops | Failed | GOAWAY | Error Rate | p50 | p95 | p99 |\n" +
		"|---|---|---|---|---|---|---|---|\n" +
		"| Direct K8s | 1000 | 5 | 5 | 0.50% | 10.0ms | 20.0ms | 40.0ms |\n" +
		"| Proxy (with fix) | 1000 | 0 | 0 | 0.00% | 11.0ms | 19.0ms | 140ms |\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestLatency(t *testing.T) {
	var b strings.Builder
	if err := report.Latency(&b, results); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Proxy (with fix): p50 +10.0%, p95 -5.0%, p99 +250.0%") {
		t.Fatalf("latency = %q", b.String())
	}
	if report.Delta(1, 0) != 0 {
		t.Fatal("Delta against 0 must be 0")
	}
}

func TestSummary(t *testing.T) {
	var b strings.Builder
	if err := report.Summary(&b, results); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "Direct K8s: 5 of 1000 operations failed (0.50%), 5 of them on a GOAWAY") {
		t.Fatalf("summary = %q", b.String())
	}
}

func TestMillis(t *testing.T) {
	for ms, want := range map[float64]string{0.842: "0.84ms", 12.34: "12.3ms", 215.4: "215ms"} {
		if got := report.Millis(ms); got != want {
			t.Errorf("Millis(%v) = %q, want %q", ms, got, want)
		}
	}
}

func TestProxies(t *testing.T) {
	rows := []report.ProxyRow{
		{Name: "Proxy (with fix)", Stats: transport.Stats{Buffered: 990, ReplaysServed: 52, PeakBytesHeld: 40 << 10}, Replayed: 26, MostAttempts: 3},
		{Name: "Proxy (adaptive)", Stats: transport.Stats{Buffered: 700, BufferedQuiet: 20, PassedThrough: transport.PassThroughStats{Quiet: 290},
			ReplaysServed: 40, RetryLaterWritten: 4, PeakBytesHeld: 3 << 19}, Replayed: 20, MostAttempts: 2},
	}
	var b strings.Builder
	if err := report.Proxies(&b, rows, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), b.String())
	}
	if f := strings.Join(strings.Fields(lines[2]), " "); f != "Proxy (adaptive) 700 20 290 40 20 2 4 1.5MiB" {
		t.Errorf("row = %q", f)
	}
	b.Reset()
	if err := report.Proxies(&b, rows, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| Proxy (with fix) | 990 | 0 | 0 | 52 | 26 | 3 | 0 | 40KiB |\n") {
		t.Errorf("Markdown:\n%s", b.String())
	}
	b.Reset()
	if err := report.Proxies(&b, []report.ProxyRow{{Name: "a|b"}}, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| a\\|b | 0 |") {
		t.Errorf("a | in a cell is not escaped:\n%s", b.String())
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 512: "512B", 1024: "1KiB", 40 << 10: "40KiB", 40<<10 + 100: "40.1KiB",
		3 << 19: "1.5MiB", 2 << 30: "2GiB"} {
		if got := report.Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
