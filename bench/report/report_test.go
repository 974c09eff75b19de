package main

import (
	"fmt"
	"strings"
	"testing"
)

// sampleRun makes go test -bench output of three rounds: teebody at 64 KiB
// has 0.9× plain's throughput, at 1 MiB 1.0×; the sweep's teebody holds
// 20 KiB more per upload than plain at 16 in flight, 8 KiB at 1.
func sampleRun() string {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: github.com/teebody/teebody/bench\n")
	for round := range 3 {
		j := float64(round) // a little spread, so the test has something to rank
		for _, r := range []struct {
			size       string
			plain, tee float64
		}{{"64KiB", 100, 90}, {"1MiB", 500, 500}} {
			fmt.Fprintf(&b, "BenchmarkProxy/size=%s/write=length/transport=plain-2 10 1000 ns/op %.1f MB/s 0.001 cpu-s 100 in-KiB/read 0.002 p99-s\n", r.size, r.plain+j)
			fmt.Fprintf(&b, "BenchmarkProxy/size=%s/write=length/transport=teebody-2 10 1000 ns/op %.1f MB/s 0.001 cpu-s 100 in-KiB/read 0.002 p99-s\n", r.size, r.tee+j)
		}
		for _, r := range []struct {
			conc       int
			plain, tee float64
		}{{1, 10000, 18192}, {16, 10000, 30480}} {
			fmt.Fprintf(&b, "BenchmarkSweep/size=1KiB/conc=%d/transport=plain-2 1 1000 ns/op 5 MB/s %.0f heap-B/req 0 stack-B/req 4 goroutines/req\n", r.conc, r.plain)
			fmt.Fprintf(&b, "BenchmarkSweep/size=1KiB/conc=%d/transport=teebody-2 1 1000 ns/op 5 MB/s %.0f heap-B/req 0 stack-B/req 5 goroutines/req\n", r.conc, r.tee)
		}
	}
	return b.String()
}

func TestGoals(t *testing.T) {
	rs, err := readResults(strings.NewReader(sampleRun()), "sample")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		met      bool
		measured []string
	}{
		"Throughput ≥ 0.97× plain at 64 KiB, 1 MiB, 16 MiB":                                                 {false, []string{"64KiB 0.90× (p=0.10; round by round 0.90–0.90, median 0.90), missed", "1MiB 1.00× (p=1.00"}},
		"Sweep, 1 KiB bodies, from 16 in flight: heap and stacks per in-flight upload ≤ 16 KiB above plain": {false, []string{"16 in flight: 20.0 KiB, missed"}},
	}
	for _, g := range checkGoals(rs) {
		w, ok := want[g.name]
		if !ok {
			continue
		}
		delete(want, g.name)
		if !g.known || g.met != w.met {
			t.Errorf("%s: known %v, met %v; want known, met %v", g.name, g.known, g.met, w.met)
		}
		if strings.Contains(g.measured, "1 in flight:") {
			t.Errorf("%s: measured %q counts 1 in flight, where one stack span swamps the figure", g.name, g.measured)
		}
		for _, m := range w.measured {
			if !strings.Contains(g.measured, m) {
				t.Errorf("%s: measured %q, want it to say %q", g.name, g.measured, m)
			}
		}
	}
	for name := range want {
		t.Errorf("no goal %q", name)
	}
}

func TestSweepPlot(t *testing.T) {
	rs, err := readResults(strings.NewReader(sampleRun()), "sample")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if !sweepSVG(&b, rs) {
		t.Fatal("no plot for a run with a sweep")
	}
	svg := b.String()
	for _, s := range []string{"<svg", "</svg>", "teebody, 1KiB", "<polyline", ">16<"} {
		if !strings.Contains(svg, s) {
			t.Errorf("plot lacks %q", s)
		}
	}
	if sweepSVG(&b, &results{}) {
		t.Error("a plot for a run without a sweep")
	}
}
