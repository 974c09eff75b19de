package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A goal is one line of the goals table: a target of issue 24 (or an earlier
// one still held), what the run measured, and its verdict: met, missed, or,
// for a ratio, not told apart from the goal at this noise (judge's rule).
type goal struct {
	name, measured string
	verdict        string
	known          bool // the run has figures for it
}

// The verdicts.
const (
	met     = "met"
	missed  = "missed"
	unclear = "not told apart from the goal at this noise"
)

// judge is the rule for a ratio goal (at most limit, or at least limit if
// atLeast): met when the ratio of the rounds one by one (their median) is
// within the goal; missed when the whole 95% confidence interval of that
// median lies beyond it; otherwise not told apart from the goal at this
// noise. Below 6 rounds the interval is infinite, so no ratio is missed.
func judge(r ratio, limit float64, atLeast bool) string {
	v := r.point()
	switch {
	case atLeast && v >= limit, !atLeast && v <= limit:
		return met
	case atLeast && r.ciHi < limit, !atLeast && r.ciLo > limit:
		return missed
	}
	return unclear
}

// worst combines the verdicts of the parts of a goal (its sizes): missed if
// any part is, else not told apart if any part is, else met.
func worst(vs []string) string {
	switch {
	case len(vs) == 0:
		return ""
	case slices.Contains(vs, missed):
		return missed
	case slices.Contains(vs, unclear):
		return unclear
	}
	return met
}

func verdictOf(ok bool) string {
	if ok {
		return met
	}
	return missed
}

// oopGoal is a ratio goal of transport a against b in the out-of-process
// benchmark, at the sizes keep accepts (nil: every size).
func oopGoal(rs *results, a, b, unit, name string, limit float64, atLeast bool, keep func(row string) bool) goal {
	g := goal{name: name}
	var parts, vs []string
	for _, row := range bySize(rs.family("OutOfProcess")) {
		if keep != nil && !keep(row) {
			continue
		}
		r := rs.ratio(row, a, b, unit)
		if !r.ok {
			continue
		}
		g.known = true
		v := judge(r, limit, atLeast)
		vs = append(vs, v)
		parts = append(parts, fmt.Sprintf("%s %s: %s", param(row, "size"), r.withCI(), v))
	}
	g.measured, g.verdict = strings.Join(parts, "; "), worst(vs)
	return g
}

// fromSize keeps the rows of a body of at least n bytes.
func fromSize(n int64) func(row string) bool {
	return func(row string) bool { return sizeBytes(row) >= n }
}

// checkGoals checks the run against the goals.
func checkGoals(rs *results) []goal {
	oop := func(a, b, unit, name string, limit float64, atLeast bool, keep func(string) bool) goal {
		return oopGoal(rs, a, b, unit, name, limit, atLeast, keep)
	}
	gs := []goal{
		// The copy floor (bench's floorTransport) is the cheapest proxy that
		// keeps every byte it hands on: what teebody adds beyond it is what
		// the library, and not keeping the bytes, costs.
		oop(teebody, floor, "proxy-cpu-s", "Always-on proxy CPU per upload ≤ 1.02× the copy floor at every size", 1.02, false, nil),
		oop(teebody, floor, "proxy-cpu-s", "Moonshot: always-on proxy CPU per upload ≤ 1.00× the copy floor at every size", 1.00, false, nil),
		oop(teebody, plain, "MB/s", "Always-on throughput ≥ 0.97× plain at every size", 0.97, true, nil),
		// Adaptive mode keeps bodies up to its floor (Config.AdaptiveFloorBytes,
		// 64 KiB by default) even for a quiet upstream: they cost what
		// always-on costs, and the goal is for the bodies above it.
		oop(adaptive, plain, "proxy-cpu-s", "Adaptive, quiet upstream: proxy CPU per upload ≤ 1.01× plain above its 64 KiB floor (1 MiB, 16 MiB)", 1.01, false, fromSize(64<<10+1)),
		oop(teebody, readAll, "proxy-cpu-s", "Always-on proxy CPU per upload ≤ 0.75× read-everything-first from 64 KiB up", 0.75, false, fromSize(64<<10)),
		oop(teebody, plain, "p99-s", "Always-on p99 latency ≤ 1.05× plain at every size", 1.05, false, nil),
	}

	if rows := rs.family("SlowClient"); len(rows) > 0 {
		row := rows[0]
		tp, ok1 := rs.median(row, plain, "first-byte-s")
		tt, ok2 := rs.median(row, teebody, "first-byte-s")
		tr, ok3 := rs.median(row, readAll, "first-byte-s")
		g := goal{name: "Slow 16 MiB upload: first byte ≤ 1.1× plain"}
		if r := rs.ratio(row, teebody, plain, "first-byte-s"); ok1 && ok2 && r.ok {
			g.known, g.verdict = true, judge(r, 1.1, false)
			g.measured = fmt.Sprintf("teebody %.3f ms, plain %.3f ms: %s", tt*1e3, tp*1e3, r.withCI())
		}
		gs = append(gs, g)
		g = goal{name: "Slow 16 MiB upload: first byte ≥ 10× sooner than read-everything-first"}
		if ok2 && ok3 && tt > 0 {
			g.known, g.verdict = true, verdictOf(tr/tt >= 10)
			g.measured = fmt.Sprintf("readall %.1f ms ÷ teebody %.3f ms = %.0f×", tr*1e3, tt*1e3, tr/tt)
		}
		gs = append(gs, g)
	}

	if rows := rs.family("Load"); len(rows) > 0 {
		row := rows[0]
		g := goal{name: "Under load, bytes held ≤ budget + one streaming chunk per request in flight"}
		peak, ok1 := rs.max(row, teebody, "peak-held-MiB")
		bound, ok2 := rs.max(row, teebody, "bound-MiB")
		if ok1 && ok2 {
			ra, _ := rs.max(row, readAll, "peak-held-MiB")
			g.known, g.verdict = true, verdictOf(peak <= bound)
			g.measured = fmt.Sprintf("worst Budget.Peak %.2f MiB, bound %.2f MiB (read-everything-first: %.0f MiB, unbounded)",
				peak, bound, ra)
		}
		gs = append(gs, g)
		g = goal{name: "Bytes held back to 0 when the last response is closed"}
		if d, ok := rs.max(row, teebody, "drain-s"); ok {
			g.known, g.verdict = true, verdictOf(d == 0)
			g.measured = fmt.Sprintf("worst %.0f µs after the last Close (0: already at that Close)", d*1e6)
		}
		gs = append(gs, g)
	}

	if rows := rs.family("Goaway"); len(rows) > 0 {
		g := goal{name: "GOAWAY at 0.02: no failed upload and no 429 with teebody", verdict: met}
		var parts []string
		for _, row := range rows {
			f, ok := rs.max(row, teebody, "fail-%")
			if !ok {
				continue
			}
			rl, _ := rs.max(row, teebody, "retry-later-%")
			pf, _ := rs.median(row, plain, "fail-%")
			g.known = true
			if f > 0 || rl > 0 {
				g.verdict = missed
			}
			parts = append(parts, fmt.Sprintf("%s: worst %.2f%% failed, %.2f%% 429 (plain: %.2f%% failed)",
				param(row, "size"), f, rl, pf))
		}
		g.measured = strings.Join(parts, "; ")
		gs = append(gs, g)
	}

	// At 1 in flight one goroutine's stack can take a fresh 32 KiB span of
	// its own, so the figure per upload resolves only from 16 in flight.
	g := goal{name: "Sweep, 1 KiB bodies, from 16 in flight: heap and stacks per in-flight upload ≤ 16 KiB above plain", verdict: met}
	var parts []string
	for _, row := range rs.family("Sweep", "size=1KiB") {
		extra, ok := extraPerRequest(rs, row, teebody)
		if c, _ := strconv.Atoi(param(row, "conc")); !ok || c < 16 {
			continue
		}
		g.known = true
		mark := ""
		if extra > 16<<10 {
			g.verdict, mark = missed, ", missed"
		}
		parts = append(parts, fmt.Sprintf("%s in flight: %.1f KiB%s", param(row, "conc"), extra/1024, mark))
	}
	g.measured = strings.Join(parts, "; ")
	gs = append(gs, g)
	return gs
}

// extraPerRequest is what an in-flight upload of a sweep row holds, heap and
// stacks, with transport beyond plain (medians over the rounds).
func extraPerRequest(rs *results, row, transport string) (float64, bool) {
	var sum float64
	for _, unit := range []string{"heap-B/req", "stack-B/req"} {
		t, ok1 := rs.median(row, transport, unit)
		p, ok2 := rs.median(row, plain, unit)
		if !ok1 || !ok2 {
			return 0, false
		}
		sum += t - p
	}
	return sum, true
}

// A retiredGoal is a goal the page used to judge against plain that no proxy
// of this design can meet: what lies beyond it is a limit, not a gap. It
// stays on the page, with the figure that retired it, so that nobody
// restores it by mistake, and it is judged no more.
type retiredGoal struct {
	name     string
	limit    string // the limit's figure against plain: what retired the goal
	measured string // teebody's figure against plain
	known    bool
}

// retiredGoals are the goals against plain that a limit lies beyond:
//   - the CPU goals of issue 18, retired in issue 24 for the copy floor's
//     figure: a second copy of every byte costs more than they allow;
//   - the read-size goal, retired in issue 42 for the ceiling of a kept
//     body's reads (ceiling.go): the cost of smaller reads shows in the CPU
//     per upload, which stays a goal.
func retiredGoals(rs *results) []retiredGoal {
	var out []retiredGoal
	for _, r := range []struct {
		name  string
		limit float64
		keep  func(string) bool
	}{
		{"Always-on proxy CPU per upload ≤ 1.05× plain at every size", 1.05, nil},
		{"Moonshot: always-on proxy CPU per upload ≤ 1.00× plain at 1 MiB and up", 1.00, fromSize(1 << 20)},
	} {
		f := oopGoal(rs, floor, plain, "proxy-cpu-s", r.name, r.limit, false, r.keep)
		t := oopGoal(rs, teebody, plain, "proxy-cpu-s", r.name, r.limit, false, r.keep)
		out = append(out, retiredGoal{name: r.name, limit: "the copy floor: " + f.measured, measured: t.measured, known: f.known})
	}
	const readName = "The always-on proxy's inbound read size ≥ 0.9× plain's at every size"
	t := oopGoal(rs, teebody, plain, "in-KiB/read", readName, 0.9, true, nil)
	return append(out, retiredGoal{name: readName, limit: "the ceiling: " + readCeilingVsPlain(rs), measured: t.measured, known: t.known})
}

// readCeilingVsPlain gives, for each size, the ceiling of a kept body's mean
// read against plain's measured read size.
func readCeilingVsPlain(rs *results) string {
	var parts []string
	for _, row := range bySize(rs.family("OutOfProcess")) {
		p, ok := rs.median(row, plain, "in-KiB/read")
		if !ok || p == 0 {
			continue
		}
		c := readCeilingKiB(sizeBytes(row))
		parts = append(parts, fmt.Sprintf("%s %.1f KiB, %.2f×", param(row, "size"), c, c/p))
	}
	return strings.Join(parts, "; ")
}

// floorWorst says how far the copy floor lies above plain in CPU per upload
// at its worst size in this run.
func floorWorst(rs *results) string {
	worstV, at := 0.0, ""
	for _, row := range bySize(rs.family("OutOfProcess")) {
		if r := rs.ratio(row, floor, plain, "proxy-cpu-s"); r.ok && r.point() > worstV {
			worstV, at = r.point(), param(row, "size")
		}
	}
	if at == "" {
		return "was not measured in this run"
	}
	return fmt.Sprintf("costs up to %.2f× plain's CPU per upload in this run (at %s)", worstV, at)
}
