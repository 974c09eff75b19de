package main

import (
	"fmt"
	"io"
	"strings"
)

// instrUnit is the proxy's instructions per upload under callgrind.
const instrUnit = "proxy-instr"

// instrGoal is the CPU goal against the floor, judged on instructions
// (the -instr runs): met when every round's ratio is within limit, missed
// when none is, otherwise not told apart. A count of instructions moves only
// with the scheduling of the uploads, so a few rounds tell 2% apart.
func instrGoal(rs *results, limit float64) goal {
	g := goal{name: fmt.Sprintf("Always-on proxy instructions per upload ≤ %.2f× the copy floor (callgrind)", limit)}
	var parts, vs []string
	for _, row := range bySize(rs.family("OutOfProcess")) {
		r := rs.ratio(row, teebody, floor, instrUnit)
		if !r.ok || r.mid == 0 {
			continue
		}
		g.known = true
		v := unclear
		switch {
		case r.hi <= limit:
			v = met
		case r.lo > limit:
			v = missed
		}
		vs = append(vs, v)
		parts = append(parts, fmt.Sprintf("%s %.3f× (rounds %.3f–%.3f): %s", param(row, "size"), r.mid, r.lo, r.hi, v))
	}
	g.measured, g.verdict = strings.Join(parts, "; "), worst(vs)
	return g
}

// instrTable writes the instructions per upload of each transport and size,
// every round's, and teebody's ratio to the floor.
func instrTable(w io.Writer, rs *results) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("| size | floor | teebody | teebody ÷ floor, rounds one by one |\n|---|---:|---:|---|\n")
	for _, row := range bySize(rs.family("OutOfProcess")) {
		r := rs.ratio(row, teebody, floor, instrUnit)
		if !r.ok {
			continue
		}
		ratios := "–"
		if r.mid != 0 {
			ratios = fmt.Sprintf("%.3f× (%.3f–%.3f)", r.mid, r.lo, r.hi)
		}
		p("| %s | %s | %s | %s |\n", param(row, "size"), counts(rs.value[row][floor][instrUnit]),
			counts(rs.value[row][teebody][instrUnit]), ratios)
	}
	p("\n")
}

// counts lists instruction counts with thousands separated.
func counts(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = thousands(int64(v + 0.5))
	}
	return strings.Join(s, ", ")
}

// thousands formats n with a comma between groups of three digits.
func thousands(n int64) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
