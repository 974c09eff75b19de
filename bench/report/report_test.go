package main

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// sample is two rounds of a run, in go test -bench's format.
const sample = `goos: linux
BenchmarkProxy/size=1KiB/transport=plain-2     100  1000 ns/op  10.00 MB/s  0.00010 p50-s  0.00020 p99-s  500 B/op  5 allocs/op
BenchmarkProxy/size=1KiB/transport=teebody-2   100  1100 ns/op   9.00 MB/s  0.00011 p50-s  0.00022 p99-s  600 B/op  6 allocs/op
BenchmarkProxy/size=1KiB/transport=readall-2   100  1200 ns/op   8.00 MB/s  0.00012 p50-s  0.00030 p99-s  700 B/op  7 allocs/op
BenchmarkSlowClient/size=16MiB/transport=plain-2    2  500 ns/op  0.00030 first-byte-s  0.500 last-byte-s
BenchmarkSlowClient/size=16MiB/transport=teebody-2  2  500 ns/op  0.00032 first-byte-s  0.501 last-byte-s
BenchmarkSlowClient/size=16MiB/transport=readall-2  2  520 ns/op  0.510 first-byte-s  0.530 last-byte-s
BenchmarkLoad/conc=32/size=1MiB/transport=teebody-2  10  100 ns/op  5.5 peak-held-MiB  6 bound-MiB  0 drain-s
BenchmarkLoad/conc=32/size=1MiB/transport=readall-2  10  100 ns/op  32 peak-held-MiB  0 drain-s
BenchmarkGoaway/size=1KiB/transport=plain-2    1000  300 ns/op  0.5 fail-%  0 retry-later-%
BenchmarkGoaway/size=1KiB/transport=teebody-2  1000  300 ns/op  0 fail-%  0 retry-later-%
BenchmarkProxy/size=1KiB/transport=plain-2     100  1000 ns/op  12.00 MB/s  0.00010 p50-s  0.00020 p99-s  500 B/op  5 allocs/op
BenchmarkProxy/size=1KiB/transport=teebody-2   100  1100 ns/op  11.00 MB/s  0.00011 p50-s  0.00019 p99-s  600 B/op  6 allocs/op
BenchmarkProxy/size=1KiB/transport=readall-2   100  1200 ns/op   8.00 MB/s  0.00012 p50-s  0.00030 p99-s  700 B/op  7 allocs/op
BenchmarkLoad/conc=32/size=1MiB/transport=teebody-2  10  100 ns/op  6.5 peak-held-MiB  6 bound-MiB  0.000012 drain-s
BenchmarkGoaway/size=1KiB/transport=teebody-2  1000  300 ns/op  0.1 fail-%  0 retry-later-%
PASS
`

func TestParseGroupsRoundsByTransport(t *testing.T) {
	s, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if s.procs != "2" {
		t.Errorf("procs = %q, want 2", s.procs)
	}
	rows := s.family("Proxy")
	if len(rows) != 1 || rows[0].params != "size=1KiB" {
		t.Fatalf("Proxy rows = %+v", rows)
	}
	r := rows[0]
	if got, _ := r.median(plain, "MB/s"); got != 11 {
		t.Errorf("median plain MB/s = %v, want 11", got)
	}
	if got, _ := r.ratio(teebody, plain, "MB/s"); got != 10.0/11.0 {
		t.Errorf("teebody ÷ plain = %v, want %v", got, 10.0/11.0)
	}
	if got, _ := s.family("Load")[0].max(teebody, "peak-held-MiB"); got != 6.5 {
		t.Errorf("max peak = %v, want 6.5", got)
	}
	if _, ok := r.median("nosuch", "MB/s"); ok {
		t.Error("median of a missing transport reported ok")
	}
}

func TestParseRejectsMalformedValue(t *testing.T) {
	_, err := parse(strings.NewReader("BenchmarkProxy/transport=plain-2 10 abc ns/op\n"))
	if err == nil {
		t.Fatal("a malformed value was accepted")
	}
}

func TestGoalsJudgeTheSample(t *testing.T) {
	s, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"Throughput ≥ 0.95× plain at every size":                                 false, // 10/11 = 0.91
		"p99 latency ≤ 1.05× plain at every size":                                true,  // median 0.205/0.20
		"Slow 16 MiB upload: first byte within 1.1× plain":                       true,
		"Slow 16 MiB upload: first byte ≥ 10× sooner than read-everything-first": true,
		"Bytes held ≤ budget + one chunk per request in flight":                  false, // 6.5 > 6
		"Bytes held back to 0 as soon as the last response is closed":            true,  // 12 µs
		"GOAWAY at 0.02: zero failures for teebody":                              false, // one round failed 0.1%
	}
	got := goals(s)
	if len(got) != len(want) {
		t.Fatalf("%d goals, want %d: %+v", len(got), len(want), got)
	}
	for _, g := range got {
		w, ok := want[g.name]
		if !ok {
			t.Errorf("unexpected goal %q", g.name)
			continue
		}
		if !g.known || g.met != w {
			t.Errorf("%s: known %t met %t (%s), want met %t", g.name, g.known, g.met, g.measured, w)
		}
	}
}

func TestWriteHasTablesAndRatios(t *testing.T) {
	s, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := write(&b, options{command: "bash bench/run.sh", goVersion: "go1.26", cpuModel: "cpu", cores: 2}, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| command | `bash bench/run.sh` |",
		"| 1KiB | 11.00 | 10.00 | 8.000 | 0.91× | 0.67 | 1.25× | 0.22 |",
		"| CPU | cpu |",
		"**missed**",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
