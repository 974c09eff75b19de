package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// num formats a measurement with about four significant digits.
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1000, a >= 100 && v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 10:
		return fmt.Sprintf("%.2f", v)
	case a >= 1:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func times(v float64) string {
	if v != 0 && math.Abs(v) < 0.01 {
		return fmt.Sprintf("%.2g×", v)
	}
	return fmt.Sprintf("%.2f×", v)
}

// pval formats a p-value, in bold when it is significant at α = 0.05.
func pval(p float64) string {
	if p < 0.05 {
		return fmt.Sprintf("**%.3f**", p)
	}
	return fmt.Sprintf("%.2f", p)
}

// metric is a column of a family's table.
type metric struct {
	unit, title string
	// scale multiplies the values for display (1e3: seconds shown as ms);
	// 0 means 1.
	scale float64
	// lowerIsBetter says how to read the ratios.
	lowerIsBetter bool
}

// table writes one metric of a family: the median per transport and the
// ratios teebody ÷ plain and teebody ÷ readall.
func table(w io.Writer, s *set, family string, m metric) {
	rows := s.family(family)
	if len(rows) == 0 {
		return
	}
	better := "higher is better"
	if m.lowerIsBetter {
		better = "lower is better"
	}
	n := 0
	for _, k := range transports {
		n = max(n, rows[0].rounds(k, m.unit))
	}
	fmt.Fprintf(w, "%s (median of %d rounds; %s; p: Mann-Whitney over the rounds, bold below 0.05)\n\n", m.title, n, better)
	fmt.Fprintf(w, "| %s | plain | teebody | readall | teebody ÷ plain | p | teebody ÷ readall | p |\n", paramTitle(rows[0]))
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		cells := []string{paramValue(r)}
		for _, k := range transports {
			if v, ok := r.median(k, m.unit); ok {
				if m.scale != 0 {
					v *= m.scale
				}
				cells = append(cells, num(v))
			} else {
				cells = append(cells, "–")
			}
		}
		for _, den := range []string{plain, readAll} {
			if v, ok := r.ratio(teebody, den, m.unit); ok {
				cells = append(cells, times(v))
			} else {
				cells = append(cells, "–")
			}
			if pv, ok := r.pValue(teebody, den, m.unit); ok && r.rounds(teebody, m.unit) > 1 {
				cells = append(cells, pval(pv))
			} else {
				cells = append(cells, "–")
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
}

func paramTitle(r *row) string {
	var keys []string
	for p := range strings.SplitSeq(r.params, "/") {
		k, _, _ := strings.Cut(p, "=")
		keys = append(keys, k)
	}
	return strings.Join(keys, ", ")
}

func paramValue(r *row) string {
	var vals []string
	for p := range strings.SplitSeq(r.params, "/") {
		_, v, _ := strings.Cut(p, "=")
		vals = append(vals, v)
	}
	return strings.Join(vals, ", ")
}

// goal is one line of the goals table.
type goal struct {
	name, measured string
	met            bool
	known          bool // false: the run has no figure for it
}

// goals checks the run against the goals of issue 5, for teebody.
func goals(s *set) []goal {
	var gs []goal

	// Throughput and p99 against plain, at every size.
	for _, g := range []struct {
		name, unit string
		limit      float64
		atLeast    bool
	}{
		{"Throughput ≥ 0.95× plain at every size", "MB/s", 0.95, true},
		{"p99 latency ≤ 1.05× plain at every size", "p99-s", 1.05, false},
	} {
		var parts []string
		met, known := true, false
		for _, r := range s.family("Proxy") {
			v, ok := r.ratio(teebody, plain, g.unit)
			if !ok {
				continue
			}
			known = true
			good := v >= g.limit
			if !g.atLeast {
				good = v <= g.limit
			}
			mark := ""
			if !good {
				met, mark = false, " (missed)"
			}
			if pv, ok := r.pValue(teebody, plain, g.unit); ok && r.rounds(teebody, g.unit) > 1 {
				mark += fmt.Sprintf(" p=%.2f", pv)
			}
			parts = append(parts, fmt.Sprintf("%s %s%s", paramValue(r), times(v), mark))
		}
		gs = append(gs, goal{g.name, strings.Join(parts, "; "), met, known})
	}

	// The slow client's first byte.
	if rows := s.family("SlowClient"); len(rows) > 0 {
		r := rows[0]
		tp, ok1 := r.median(plain, "first-byte-s")
		tt, ok2 := r.median(teebody, "first-byte-s")
		tr, ok3 := r.median(readAll, "first-byte-s")
		tp, tt, tr = tp*1e3, tt*1e3, tr*1e3 // ms
		if ok1 && ok2 {
			gs = append(gs, goal{"Slow 16 MiB upload: first byte within 1.1× plain",
				fmt.Sprintf("teebody %s ms, plain %s ms: %s (%+.2f ms)", num(tt), num(tp), times(tt/tp), tt-tp),
				tt <= 1.1*tp, true})
		} else {
			gs = append(gs, goal{name: "Slow 16 MiB upload: first byte within 1.1× plain"})
		}
		if ok2 && ok3 && tt > 0 {
			gs = append(gs, goal{"Slow 16 MiB upload: first byte ≥ 10× sooner than read-everything-first",
				fmt.Sprintf("readall %s ms ÷ teebody %s ms = %s", num(tr), num(tt), times(tr/tt)),
				tr/tt >= 10, true})
		} else {
			gs = append(gs, goal{name: "Slow 16 MiB upload: first byte ≥ 10× sooner than read-everything-first"})
		}
	}

	// Memory under load.
	if rows := s.family("Load"); len(rows) > 0 {
		r := rows[0]
		peak, ok1 := r.max(teebody, "peak-held-MiB")
		bound, ok2 := r.max(teebody, "bound-MiB")
		g := goal{name: "Bytes held ≤ budget + one chunk per request in flight"}
		if ok1 && ok2 {
			ra, _ := r.max(readAll, "peak-held-MiB")
			g.measured = fmt.Sprintf("worst Budget.Peak %s MiB, bound %s MiB (read-everything-first: %s MiB, unbounded)",
				num(peak), num(bound), num(ra))
			ht, ok3 := r.median(teebody, "heap-added-MiB")
			hp, ok4 := r.median(plain, "heap-added-MiB")
			if ok3 && ok4 {
				g.measured += fmt.Sprintf("; Go heap peak above baseline %s MiB, plain's %s MiB (medians)", num(ht), num(hp))
			}
			g.met, g.known = peak <= bound, true
		}
		gs = append(gs, g)
		d, ok := r.max(teebody, "drain-s")
		d *= 1e6 // µs
		g = goal{name: "Bytes held back to 0 as soon as the last response is closed"}
		if ok {
			g.known = true
			switch {
			case d == 0:
				g.measured, g.met = "0 at the last Close in every wave of every round", true
			case d <= 1000:
				g.measured, g.met = fmt.Sprintf("worst %s µs after the last Close", num(d)), true
			default:
				g.measured = fmt.Sprintf("worst %s µs after the last Close", num(d))
			}
		}
		gs = append(gs, g)
	}

	// GOAWAY.
	if rows := s.family("Goaway"); len(rows) > 0 {
		var parts []string
		met, known := true, false
		for _, r := range rows {
			f, ok := r.max(teebody, "fail-%")
			if !ok {
				continue
			}
			known = true
			rl, _ := r.max(teebody, "retry-later-%")
			pf, _ := r.median(plain, "fail-%")
			if f > 0 || rl > 0 {
				met = false
			}
			parts = append(parts, fmt.Sprintf("%s: worst %s%% failed, %s%% 429 (plain: %s%% failed)",
				paramValue(r), num(f), num(rl), num(pf)))
		}
		gs = append(gs, goal{"GOAWAY at 0.02: zero failures for teebody", strings.Join(parts, "; "), met, known})
	}
	return gs
}

func write(w io.Writer, o options, s *set) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# Benchmarks\n\n")
	p("Generated by `%s` (bench/run.sh, then bench/report); do not edit by hand.\n\n", o.command)
	p("Stack: client → `httputil.ReverseProxy` → TLS HTTP/2 `httptest` upstream, all on loopback in one process. ")
	p("The client reaches the proxy over cleartext HTTP/1.1; the upstream drains and checksums every body (CRC-32C) ")
	p("and every upload is checked. Transports: **plain** (the inner `*http.Transport`, no replay: the speed limit), ")
	p("**teebody** (`transport.New`), **readall** (read-everything-first: `io.ReadAll` and a `bytes.Reader` ")
	p("`GetBody`, as go-retryablehttp does). See bench/doc.go and bench/bench_test.go for the parameters.\n\n")

	p("## Run\n\n")
	p("| | |\n|---|---|\n")
	p("| command | `%s` |\n", cell(o.command))
	if o.benchCommand != "" {
		p("| go test | `%s` |\n", cell(o.benchCommand))
	}
	if o.commit != "" {
		p("| commit | `%s` |\n", o.commit)
	}
	if o.date != "" {
		p("| started | %s |\n", o.date)
	}
	if o.elapsed != "" {
		p("| took | %s |\n", o.elapsed)
	}
	p("| go | %s |\n", o.goVersion)
	p("| CPU | %s |\n", o.cpuModel)
	p("| cores | %d logical (GOMAXPROCS %s) |\n", o.cores, orDash(s.procs))
	if o.loadBefore != "" || o.loadAfter != "" {
		p("| load average (1, 5, 15 min) | before: %s; after: %s |\n", orDash(o.loadBefore), orDash(o.loadAfter))
	}
	p("\nThe machine is shared with other work; its load average above says how much. Each round runs every ")
	p("benchmark once, rounds are interleaved so that a burst of outside load hits every transport alike, ")
	p("and the tables give medians over the rounds.\n\n")

	p("## Goals (issue 5)\n\n")
	p("| goal | measured (teebody) | |\n|---|---|---|\n")
	for _, g := range goals(s) {
		verdict := "missed"
		switch {
		case !g.known:
			verdict, g.measured = "not measured", "no figures in this run"
		case g.met:
			verdict = "met"
		}
		p("| %s | %s | **%s** |\n", g.name, g.measured, verdict)
	}
	p("\n")

	p("## Proxy: one upload at a time\n\n")
	p("ns/op is the latency of one upload through the proxy; MB/s its throughput; p50/p99 over the uploads ")
	p("of one round (at 16 MiB a round has few uploads, so its p99 is close to its maximum).\n\n")
	for _, m := range []metric{
		{"MB/s", "Throughput, MB/s", 0, false},
		{"p50-s", "Latency p50, ms", 1e3, true},
		{"p99-s", "Latency p99, ms", 1e3, true},
		{"cpu-s", "CPU time per upload, µs (whole process: client, proxy, upstream; steadier than wall time on a busy machine)", 1e6, true},
		{"in-KiB/read", "The proxy's reads of its inbound connections, KiB per read", 0, false},
		{"B/op", "Allocated bytes per upload (whole process)", 0, true},
		{"allocs/op", "Allocations per upload (whole process)", 0, true},
	} {
		table(w, s, "Proxy", m)
	}

	p("## Slow client\n\n")
	p("A 16 MiB body uploaded at 32 MiB/s (16 KiB pieces): times from the start of the upload until the ")
	p("upstream read its first and its last byte (median over the uploads of a round).\n\n")
	table(w, s, "SlowClient", metric{"first-byte-s", "Upstream's first byte, ms", 1e3, true})
	table(w, s, "SlowClient", metric{"last-byte-s", "Upstream's last byte, ms", 1e3, true})

	p("## Memory under load\n\n")
	p("Waves of 32 concurrent 1 MiB uploads; teebody has a 4 MiB budget (1 MiB per request). One op is one ")
	p("wave. peak-held is the peak of request-body bytes held (teebody: `Budget.Peak`; readall: what its ")
	p("buffers held; plain holds none); bound is the budget plus one 64 KiB chunk per upload in flight; ")
	p("heap-added the peak of the Go heap (live and unswept objects, sampled every 0.5 ms) above its level ")
	p("after a GC before the run; drain the worst time, over the waves, from the proxy's last response ")
	p("Close until bytes held was 0 (0: it already was when that Close returned).\n\n")
	for _, m := range []metric{
		{"MB/s", "Throughput, MB/s", 0, false},
		{"cpu-s", "CPU time per wave, ms (whole process)", 1e3, true},
		{"in-KiB/read", "The proxy's reads of its inbound connections, KiB per read (fewer, larger reads cost less CPU)", 0, false},
		{"peak-held-MiB", "Peak bytes held, MiB", 0, true},
		{"bound-MiB", "Bound, MiB", 0, true},
		{"heap-added-MiB", "Go heap above baseline, peak, MiB", 0, true},
		{"drain-s", "Drain after the last Close, µs", 1e6, true},
	} {
		table(w, s, "Load", m)
	}

	p("## GOAWAY at 0.02\n\n")
	p("The upstream answers 2%% of requests with `Connection: close` (a graceful GOAWAY, as the Kubernetes ")
	p("API server's --goaway-chance does), 8 uploads in flight. ns/op is wall time per upload, so MB/s is ")
	p("the throughput of the 8 together; fail-%% are the uploads that got neither a 200 nor a 429.\n\n")
	for _, m := range []metric{
		{"MB/s", "Throughput, MB/s", 0, false},
		{"p99-s", "Latency p99, ms", 1e3, true},
		{"cpu-s", "CPU time per upload, µs (whole process)", 1e6, true},
		{"fail-%", "Failed uploads, %", 0, true},
		{"retry-later-%", "429 Too Many Requests, %", 0, true},
		{"goaway-%", "Responses that carried a GOAWAY, %", 0, false},
	} {
		table(w, s, "Goaway", m)
	}

	for _, c := range []struct{ title, file string }{
		{"benchstat, plain as the base", o.vsPlain},
		{"benchstat, readall as the base", o.vsReadAll},
	} {
		text, err := readOptional(c.file)
		if err != nil {
			return err
		}
		if text == "" {
			continue
		}
		p("## %s\n\n```\n%s```\n\n", c.title, text)
	}
	if o.rawText != "" {
		p("## Raw output\n\n<details><summary>every round, as go test printed it</summary>\n\n```\n%s```\n\n</details>\n\n",
			strings.TrimRight(o.rawText, "\n")+"\n")
	}
	notes, err := readOptional(o.notes)
	if err != nil {
		return err
	}
	if notes != "" {
		p("%s\n", strings.TrimRight(notes, "\n"))
	}
	return nil
}

// cell escapes the pipes of a table cell's text (GitHub's tables split on
// them even inside code spans).
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
