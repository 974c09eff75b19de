package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// sampleRun makes go test -bench output of seven rounds. Out of process,
// teebody's CPU per upload against plain, round by round, is 1.02× every
// round at 1 KiB, 1.10× at 64 KiB, and from 1.00× to 1.12× (median 1.06×) at
// 1 MiB; the copy floor's is 1.01×, 1.03× and 1.08×, so that teebody ÷ floor
// is 1.01× at 1 KiB (within 1.02×, not 1.00×), 1.07× at 64 KiB (missed) and
// 0.93× to 1.04× (median 0.98×) at 1 MiB (met). Read-everything-first costs
// what plain does at 1 KiB and 1.5× from 64 KiB up. teebody's throughput is
// 0.90× at 64 KiB. The sweep's teebody holds 20 KiB more per upload than
// plain at 16 in flight, 8 KiB at 1.
func sampleRun() string {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: github.com/teebody/teebody/bench\n")
	spread := []float64{1.00, 1.12, 1.02, 1.10, 1.04, 1.09, 1.06}
	for round := range 7 {
		j := float64(round%3) / 10 // the machine's load moves every transport alike
		for _, r := range []struct {
			size                  string
			cpu, mb, floor, ready float64 // teebody's, the floor's and readall's ÷ plain
		}{{"1KiB", 1.02, 1, 1.01, 1}, {"64KiB", 1.10, 0.9, 1.03, 1.5}, {"1MiB", spread[round], 1, 1.08, 1.5}} {
			for _, k := range []struct {
				name     string
				cpu, mbs float64
			}{{"plain", 1, 1}, {"floor", r.floor, 1}, {"teebody", r.cpu, r.mb}, {"readall", r.ready, 1}} {
				fmt.Fprintf(&b, "BenchmarkOutOfProcess/size=%s/transport=%s-2 100 1000 ns/op %.2f MB/s %.6f proxy-cpu-s 3 proxy-vcsw 5 proxy-faults 100 proxy-allocs 0.002 p99-s 64 in-KiB/read 7 in-reads\n",
					r.size, k.name, 100*k.mbs*(1+j), 0.001*k.cpu*(1+j))
			}
		}
		if round < 3 {
			for _, r := range []struct {
				conc       int
				plain, tee float64
			}{{1, 10000, 18192}, {16, 10000, 30480}} {
				fmt.Fprintf(&b, "BenchmarkSweep/size=1KiB/conc=%d/transport=plain-2 1 1000 ns/op 5 MB/s %.0f heap-B/req 0 stack-B/req 4 goroutines/req\n", r.conc, r.plain)
				fmt.Fprintf(&b, "BenchmarkSweep/size=1KiB/conc=%d/transport=teebody-2 1 1000 ns/op 5 MB/s %.0f heap-B/req 0 stack-B/req 5 goroutines/req\n", r.conc, r.tee)
			}
		}
	}
	return b.String()
}

func TestJudge(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		r       ratio
		limit   float64
		atLeast bool
		want    string
	}{
		{ratio{mid: 1.04, ciLo: 1.00, ciHi: 1.10}, 1.05, false, met},
		{ratio{mid: 1.05, ciLo: 1.05, ciHi: 1.05}, 1.05, false, met}, // on the line is within
		{ratio{mid: 1.08, ciLo: 1.06, ciHi: 1.10}, 1.05, false, missed},
		{ratio{mid: 1.08, ciLo: 1.03, ciHi: 1.10}, 1.05, false, unclear},
		{ratio{mid: 1.08, ciLo: 1.05, ciHi: 1.10}, 1.05, false, unclear}, // the interval touches the goal
		{ratio{mid: 2.00, ciLo: -inf, ciHi: inf}, 1.05, false, unclear},  // below 6 rounds
		{ratio{mid: 0.98, ciLo: 0.90, ciHi: 1.00}, 0.97, true, met},
		{ratio{mid: 0.95, ciLo: 0.90, ciHi: 0.96}, 0.97, true, missed},
		{ratio{mid: 0.95, ciLo: 0.90, ciHi: 0.99}, 0.97, true, unclear},
		{ratio{v: 1.04, ciLo: -inf, ciHi: inf}, 1.05, false, met}, // unpaired: the ratio of medians
	} {
		if got := judge(c.r, c.limit, c.atLeast); got != c.want {
			t.Errorf("judge(%+v, %v, atLeast %v) = %q; want %q", c.r, c.limit, c.atLeast, got, c.want)
		}
	}
	for _, c := range []struct {
		vs   []string
		want string
	}{
		{[]string{met, met}, met},
		{[]string{met, unclear}, unclear},
		{[]string{unclear, missed, met}, missed},
		{nil, ""},
	} {
		if got := worst(c.vs); got != c.want {
			t.Errorf("worst(%q) = %q; want %q", c.vs, got, c.want)
		}
	}
}

func TestGoals(t *testing.T) {
	rs, err := readResults(strings.NewReader(sampleRun()), "sample")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		verdict  string
		measured []string
	}{
		"Always-on proxy CPU per upload ≤ 1.02× the copy floor at every size": {missed, []string{
			"1KiB 1.01× (CI 1.01–1.01, p=", "): met",
			"64KiB 1.07× (CI 1.07–1.07, p=", "): missed",
			"1MiB 0.98× (CI 0.93–1.04, p=", "): met"}},
		"Moonshot: always-on proxy CPU per upload ≤ 1.00× the copy floor at every size": {missed, []string{
			"1KiB 1.01× (CI 1.01–1.01, p=", "): missed", "1MiB 0.98×"}},
		"Always-on proxy CPU per upload ≤ 0.75× read-everything-first from 64 KiB up": {met, []string{
			"64KiB 0.73× (CI 0.73–0.73, p=", "1MiB 0.71× (CI 0.67–0.75, p="}},
		"Always-on throughput ≥ 0.97× plain at every size":                                                  {missed, []string{"64KiB 0.90× (CI 0.90–0.90, p=", "): missed"}},
		"Sweep, 1 KiB bodies, from 16 in flight: heap and stacks per in-flight upload ≤ 16 KiB above plain": {missed, []string{"16 in flight: 20.0 KiB, missed"}},
	}
	for _, g := range checkGoals(rs) {
		w, ok := want[g.name]
		if !ok {
			continue
		}
		delete(want, g.name)
		if !g.known || g.verdict != w.verdict {
			t.Errorf("%s: known %v, verdict %q; want known, %q", g.name, g.known, g.verdict, w.verdict)
		}
		if strings.Contains(g.measured, "1 in flight:") {
			t.Errorf("%s: measured %q counts 1 in flight, where one stack span swamps the figure", g.name, g.measured)
		}
		if strings.Contains(g.name, "from 64 KiB up") && strings.Contains(g.measured, "1KiB") {
			t.Errorf("%s: measured %q judges 1 KiB", g.name, g.measured)
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

// TestRetiredGoals: the plain-relative CPU goals stay on the page with the
// copy floor's figure that retired them, each at the sizes it was set for.
func TestRetiredGoals(t *testing.T) {
	rs, err := readResults(strings.NewReader(sampleRun()), "sample")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{ // the limit's figure, teebody's
		"Always-on proxy CPU per upload ≤ 1.05× plain at every size": {
			"the copy floor: 1KiB 1.01× (CI 1.01–1.01, p=0.", "1MiB 1.08× (CI 1.08–1.08, p=0."},
		"Moonshot: always-on proxy CPU per upload ≤ 1.00× plain at 1 MiB and up": {
			"the copy floor: 1MiB 1.08× (CI 1.08–1.08, p=", "1MiB 1.06× (CI 1.00–1.12, p="},
		// Every transport reads 64 KiB at a time in the sample.
		"The always-on proxy's inbound read size ≥ 0.9× plain's at every size": {
			"the ceiling: 1KiB 0.5 KiB, 0.01×; 64KiB 10.7 KiB, 0.17×; 1MiB 102.4 KiB, 1.60×", "64KiB 1.00× (CI 1.00–1.00, p="},
	}
	for _, g := range retiredGoals(rs) {
		w, ok := want[g.name]
		if !ok {
			t.Errorf("retired goal %q: not one of the plain-relative CPU goals", g.name)
			continue
		}
		delete(want, g.name)
		if !g.known || !strings.Contains(g.limit, w[0]) || !strings.Contains(g.limit+g.measured, w[1]) {
			t.Errorf("%s: known %v, limit %q, teebody %q; want them to say %q and %q", g.name, g.known, g.limit, g.measured, w[0], w[1])
		}
		if strings.Contains(g.name, "1 MiB and up") && strings.Contains(g.limit+g.measured, "64KiB") {
			t.Errorf("%s: judges 64 KiB: %q, %q", g.name, g.limit, g.measured)
		}
	}
	for name := range want {
		t.Errorf("no retired goal %q", name)
	}
	if got, want := floorWorst(rs), "up to 1.08× plain's CPU per upload in this run (at 1MiB)"; !strings.Contains(got, want) {
		t.Errorf("floorWorst = %q; want it to say %q", got, want)
	}
	retired := map[string]bool{}
	for _, g := range retiredGoals(rs) {
		retired[g.name] = true
	}
	for _, g := range checkGoals(rs) {
		if retired[g.name] {
			t.Errorf("goal %q is judged, but retired", g.name)
		}
	}
}

func TestHeadline(t *testing.T) {
	rs, err := readResults(strings.NewReader(sampleRun()), "sample")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	headline(&b, rs)
	out := b.String()
	for _, s := range []string{
		// plain's 1.1 ms per upload (its median), floor ÷ plain, teebody ÷ floor, teebody ÷ plain
		"| 64KiB | 1.1 | 1.03× (CI 1.03–1.03, p=0.28) | 1.07× (CI 1.07–1.07, p=0.28) | 1.10× (CI 1.10–1.10, p=0.03) |",
		"| 1MiB | 1.1 | 1.08× (CI 1.08–1.08, p=0.28) | 0.98× (CI 0.93–1.04, p=0.88) | 1.06× (CI 1.00–1.12, p=0.21) |",
		"| 1KiB | floor | 3.0 | 5.0 | 100 |",
		"| 1KiB | teebody | 3.0 | 5.0 | 100 |",
		"| 64KiB | teebody | 3.0 | 5.0 | 100 | – | – | 64.0 | 7.0 | 6 |", // the read size, then its ceiling
		"| 64KiB | plain | 3.0 | 5.0 | 100 | – | – | 64.0 | 7.0 | – |",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("headline lacks %q:\n%s", s, out)
		}
	}
	b.Reset()
	headline(&b, &results{})
	if b.Len() != 0 {
		t.Errorf("a headline for a run without the out-of-process benchmark: %q", b.String())
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

func TestBySize(t *testing.T) {
	rows := []string{"X/size=16MiB/a", "X/size=1KiB/a", "X/size=1MiB/a", "X/size=64KiB/a", "X/size=1KiB/b"}
	want := []string{"X/size=1KiB/a", "X/size=1KiB/b", "X/size=64KiB/a", "X/size=1MiB/a", "X/size=16MiB/a"}
	if got := bySize(rows); !slices.Equal(got, want) {
		t.Errorf("bySize = %q; want %q", got, want)
	}
}

// TestReadCeiling: a kept body's fewest reads are the head read, which
// brings up to 4 KiB of it, reads that each bring at most what has arrived
// plus 4 KiB, up to 1 MiB, and the read ahead after the body.
func TestReadCeiling(t *testing.T) {
	for _, c := range []struct {
		n, reads int64
		kib      string
	}{
		{0, 0, "0.0"},
		{1 << 10, 2, "0.5"},       // all of it in the head read
		{4 << 10, 2, "2.0"},       // still
		{4<<10 + 1, 3, "1.3"},     // a byte more takes a read
		{12 << 10, 3, "4.0"},      // 4 KiB with the head, then 8
		{12<<10 + 1, 4, "3.0"},    // a byte past that takes another
		{64 << 10, 6, "10.7"},     // 4 · (2⁵ − 1) = 124 KiB ≥ 64 > 60 = 4 · (2⁴ − 1)
		{1 << 20, 10, "102.4"},    // 4 · (2⁹ − 1) = 2044 KiB ≥ 1024 > 1020
		{16 << 20, 25, "655.4"},   // 2044 KiB in 9 reads with the head's, then 15 of 1 MiB
		{2044 << 10, 10, "204.4"}, // the classes' cap starts past this
		{3068 << 10, 11, "278.9"}, // one read of 1 MiB more
	} {
		if got := readsFor(c.n); got != c.reads {
			t.Errorf("readsFor(%d) = %d; want %d", c.n, got, c.reads)
		}
		if got := fmt.Sprintf("%.1f", readCeilingKiB(c.n)); got != c.kib {
			t.Errorf("readCeilingKiB(%d) = %s; want %s", c.n, got, c.kib)
		}
	}
}
