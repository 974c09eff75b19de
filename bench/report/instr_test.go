package main

import (
	"fmt"
	"strings"
	"testing"
)

// instrRun makes go test -bench output of the callgrind rounds: floor and
// teebody at each size, with teebody's instructions ÷ the floor's given
// round by round.
func instrRun(ratios map[string][]float64) string {
	var b strings.Builder
	for _, size := range []string{"1KiB", "64KiB"} {
		for round, r := range ratios[size] {
			floor := 100000.0 + float64(round)*1000
			fmt.Fprintf(&b, "BenchmarkOutOfProcess/size=%s/transport=floor-2 500 1000 ns/op %.0f proxy-instr\n", size, floor)
			fmt.Fprintf(&b, "BenchmarkOutOfProcess/size=%s/transport=teebody-2 500 1000 ns/op %.0f proxy-instr\n", size, floor*r)
		}
	}
	return b.String()
}

func TestInstrGoal(t *testing.T) {
	for _, c := range []struct {
		name   string
		ratios map[string][]float64
		want   string
	}{
		{"every round within", map[string][]float64{"1KiB": {1.01, 1.02, 1.00}, "64KiB": {1.00, 0.99, 1.015}}, met},
		{"every round beyond at one size", map[string][]float64{"1KiB": {1.01, 1.02, 1.00}, "64KiB": {1.03, 1.05, 1.04}}, missed},
		{"rounds on both sides", map[string][]float64{"1KiB": {1.01, 1.03, 1.00}, "64KiB": {1.00, 1.01, 1.01}}, unclear},
	} {
		rs, err := readResults(strings.NewReader(instrRun(c.ratios)), "instr")
		if err != nil {
			t.Fatal(err)
		}
		g := instrGoal(rs, 1.02)
		if !g.known || g.verdict != c.want {
			t.Errorf("%s: known %v, verdict %q (%s); want %q", c.name, g.known, g.verdict, g.measured, c.want)
		}
	}
	// The main run's output has no instruction counts: the goal is unknown.
	rs, err := readResults(strings.NewReader(sampleRun()), "sample")
	if err != nil {
		t.Fatal(err)
	}
	if g := instrGoal(rs, 1.02); g.known {
		t.Errorf("without proxy-instr: known, %q", g.measured)
	}
}

func TestInstrTable(t *testing.T) {
	rs, err := readResults(strings.NewReader(instrRun(map[string][]float64{"64KiB": {1.05, 1.04}})), "instr")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	instrTable(&b, rs)
	for _, want := range []string{"| 64KiB | 100,000, 101,000 | 105,000, 105,040 | 1.045× (1.040–1.050) |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 273237: "273,237", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q; want %q", n, got, want)
		}
	}
}
