// Package report prints load results and the proxies' transport stats side
// by side, in columns or as Markdown tables: the table of the original
// experiment, a latency comparison, and a summary.
package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/teebody/teebody/cmd/demo/internal/load"
)

// Table writes one row per result: as a Markdown table when markdown is
// set, else in columns aligned with spaces.
func Table(w io.Writer, results []*load.Result, markdown bool) error {
	rows := make([][]string, len(results))
	for i, r := range results {
		rows[i] = []string{r.Name, fmt.Sprint(r.TotalOperations), fmt.Sprint(r.FailedOperations), fmt.Sprint(r.GoawayErrors),
			fmt.Sprintf("%.2f%%", r.ErrorRate), Millis(r.P50Ms), Millis(r.P95Ms), Millis(r.P99Ms)}
	}
	return write(w, []string{"Test Configuration", "Total Ops", "Failed", "GOAWAY", "Error Rate", "p50", "p95", "p99"}, rows, markdown)
}

// write writes header and rows as a Markdown table, with "|" in a cell
// escaped, or in columns aligned with spaces.
func write(w io.Writer, header []string, rows [][]string, markdown bool) error {
	if !markdown {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, r := range append([][]string{header}, rows...) {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		return tw.Flush()
	}
	var b strings.Builder
	line := func(cells []string) { b.WriteString("| " + strings.Join(cells, " | ") + " |\n") }
	line(header)
	b.WriteString("|" + strings.Repeat("---|", len(header)) + "\n")
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		line(cells)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Millis formats milliseconds for a table: 0.84ms, 12.3ms, 215ms.
func Millis(ms float64) string {
	switch {
	case ms < 10:
		return fmt.Sprintf("%.2fms", ms)
	case ms < 100:
		return fmt.Sprintf("%.1fms", ms)
	}
	return fmt.Sprintf("%.0fms", ms)
}

// Bytes is n in the largest binary unit it reaches, whole when the unit
// divides it, else with one decimal: 0B, 256B, 1KiB, 40KiB, 1.5MiB.
func Bytes(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		switch {
		case n >= u.size && n%u.size == 0:
			return fmt.Sprintf("%d%s", n/u.size, u.name)
		case n >= u.size:
			return fmt.Sprintf("%.1f%s", float64(n)/float64(u.size), u.name)
		}
	}
	return fmt.Sprintf("%dB", n)
}
