package main

import (
	"fmt"
	"io"
	"strings"
)

// headline writes the out-of-process benchmark's tables: for each body size,
// the proxy's CPU per upload and the throughput of the copy floor against
// plain, of teebody and adaptive against the floor and against plain, and of
// read-everything-first against plain and teebody against it; then what each
// transport's proxy did per upload. It writes nothing for a run without it.
func headline(w io.Writer, rs *results) {
	rows := bySize(rs.family("OutOfProcess"))
	if len(rows) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	pairs := [][2]string{{floor, plain}, {teebody, floor}, {teebody, plain}, {adaptive, floor}, {adaptive, plain},
		{readAll, plain}, {teebody, readAll}}
	for _, m := range []struct{ unit, title, base string }{
		{"proxy-cpu-s", "The proxy's CPU time per upload", "plain, ms per upload"},
		{"MB/s", "Throughput (8 uploads at once)", "plain, MB/s"},
	} {
		p("**%s**, the median of the rounds' ratios one by one (95%% confidence interval; p):\n\n", m.title)
		p("| body | %s |", m.base)
		for _, pr := range pairs {
			p(" %s ÷ %s |", pr[0], pr[1])
		}
		p("\n|---|---:|%s\n", strings.Repeat("---:|", len(pairs)))
		for _, row := range rows {
			base := "–"
			if v, ok := rs.median(row, plain, m.unit); ok {
				if m.unit == "proxy-cpu-s" {
					v *= 1e3
				}
				base = fmt.Sprintf("%.3g", v)
			}
			p("| %s | %s |", param(row, "size"), base)
			for _, pr := range pairs {
				p(" %s |", cell(rs.ratio(row, pr[0], pr[1], m.unit).withCI()))
			}
			p("\n")
		}
		p("\n")
	}
	p("**What the proxy did per upload** (medians over the rounds): voluntary context switches (a thread ")
	p("blocked: a futex, a sleep, a read with nothing to read), minor page faults (memory taken from the system ")
	p("anew, a page at a time), heap allocations and bytes allocated, GC cycles ")
	p("per 1,000 uploads, and the mean size and the number of its reads from the client (the head's read and ")
	p("the read ahead after the body included), with the fewest reads of a kept body beside teebody's (the ")
	p("retired goals below say why):\n\n")
	kinds := []string{plain, floor, teebody, adaptive, readAll}
	units := []struct {
		unit, name, format string
		scale              float64
	}{
		{"proxy-vcsw", "switches", "%.1f", 1},
		{"proxy-faults", "page faults", "%.1f", 1},
		{"proxy-allocs", "allocs", "%.0f", 1},
		{"proxy-B", "KiB allocated", "%.1f", 1.0 / 1024},
		{"proxy-gc", "GC per 1,000", "%.1f", 1000},
		{"in-KiB/read", "KiB per read", "%.1f", 1},
		{"in-reads", "reads", "%.1f", 1},
	}
	p("| body | transport |")
	for _, u := range units {
		p(" %s |", u.name)
	}
	p(" fewest reads |\n|---|---|%s\n", strings.Repeat("---:|", len(units)+1))
	for _, row := range rows {
		for _, k := range kinds {
			p("| %s | %s |", param(row, "size"), k)
			for _, u := range units {
				if v, ok := rs.median(row, k, u.unit); ok {
					p(" "+u.format+" |", v*u.scale)
				} else {
					p(" – |")
				}
			}
			if k == teebody {
				p(" %d |\n", readsFor(sizeBytes(row)))
			} else {
				p(" – |\n")
			}
		}
	}
	p("\n")
}
