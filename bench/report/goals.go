package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A goal is one line of the goals table: a target of issue 11 (or an earlier
// one still held), what the run measured, and whether it was met.
type goal struct {
	name, measured string
	met, known     bool // known: the run has figures for it
}

// goalSizes are the sizes the throughput and CPU goals apply to.
var goalSizes = []string{"64KiB", "1MiB", "16MiB"}

// checkGoals checks the run against the goals, for teebody against plain
// unless a goal says otherwise.
func checkGoals(rs *results) []goal {
	var gs []goal
	proxy := func(unit, name string, limit float64, atLeast bool, sizes []string) goal {
		g := goal{name: name, met: true}
		var parts []string
		for _, row := range rs.family("Proxy", "write=length") {
			if sizes != nil && !slices.Contains(sizes, param(row, "size")) {
				continue
			}
			r := rs.ratio(row, teebody, plain, unit)
			if !r.ok {
				continue
			}
			g.known = true
			good := r.v >= limit
			if !atLeast {
				good = r.v <= limit
			}
			mark := ""
			if !good {
				g.met, mark = false, ", missed"
			}
			parts = append(parts, fmt.Sprintf("%s %s%s", param(row, "size"), r.long(), mark))
		}
		g.measured = strings.Join(parts, "; ")
		return g
	}
	gs = append(gs,
		proxy("MB/s", "Throughput ≥ 0.97× plain at 64 KiB, 1 MiB, 16 MiB", 0.97, true, goalSizes),
		proxy("cpu-s", "CPU per upload ≤ 1.05× plain at 64 KiB, 1 MiB, 16 MiB", 1.05, false, goalSizes),
		proxy("p99-s", "p99 latency ≤ 1.05× plain at every size", 1.05, false, nil),
		proxy("in-KiB/read", "The proxy's inbound read size ≥ 0.9× plain's at every size", 0.9, true, nil),
	)

	if rows := rs.family("SlowClient"); len(rows) > 0 {
		row := rows[0]
		tp, ok1 := rs.median(row, plain, "first-byte-s")
		tt, ok2 := rs.median(row, teebody, "first-byte-s")
		tr, ok3 := rs.median(row, readAll, "first-byte-s")
		g := goal{name: "Slow 16 MiB upload: first byte ≤ 1.1× plain"}
		if ok1 && ok2 && tp > 0 {
			g.known, g.met = true, tt <= 1.1*tp
			g.measured = fmt.Sprintf("teebody %.3f ms, plain %.3f ms: %s", tt*1e3, tp*1e3,
				rs.ratio(row, teebody, plain, "first-byte-s"))
		}
		gs = append(gs, g)
		g = goal{name: "Slow 16 MiB upload: first byte ≥ 10× sooner than read-everything-first"}
		if ok2 && ok3 && tt > 0 {
			g.known, g.met = true, tr/tt >= 10
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
			g.known, g.met = true, peak <= bound
			g.measured = fmt.Sprintf("worst Budget.Peak %.2f MiB, bound %.2f MiB (read-everything-first: %.0f MiB, unbounded)",
				peak, bound, ra)
		}
		gs = append(gs, g)
		g = goal{name: "Bytes held back to 0 when the last response is closed"}
		if d, ok := rs.max(row, teebody, "drain-s"); ok {
			g.known, g.met = true, d == 0
			g.measured = fmt.Sprintf("worst %.0f µs after the last Close (0: already at that Close)", d*1e6)
		}
		gs = append(gs, g)
	}

	if rows := rs.family("Goaway"); len(rows) > 0 {
		g := goal{name: "GOAWAY at 0.02: no failed upload and no 429 with teebody", met: true}
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
				g.met = false
			}
			parts = append(parts, fmt.Sprintf("%s: worst %.2f%% failed, %.2f%% 429 (plain: %.2f%% failed)",
				param(row, "size"), f, rl, pf))
		}
		g.measured = strings.Join(parts, "; ")
		gs = append(gs, g)
	}

	// At 1 in flight one goroutine's stack can take a fresh 32 KiB span of
	// its own, so the figure per upload resolves only from 16 in flight.
	g := goal{name: "Sweep, 1 KiB bodies, from 16 in flight: heap and stacks per in-flight upload ≤ 16 KiB above plain", met: true}
	var parts []string
	for _, row := range rs.family("Sweep", "size=1KiB") {
		extra, ok := extraPerRequest(rs, row, teebody)
		if c, _ := strconv.Atoi(param(row, "conc")); !ok || c < 16 {
			continue
		}
		g.known = true
		mark := ""
		if extra > 16<<10 {
			g.met, mark = false, ", missed"
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
