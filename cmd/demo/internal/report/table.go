// Package report prints load results side by side: the table of the
// original experiment, a latency comparison, and a summary.
package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/teebody/teebody/cmd/demo/internal/load"
)

var header = []string{"Test Configuration", "Total Ops", "Failed", "GOAWAY", "Error Rate", "p50", "p95", "p99"}

func row(r *load.Result) []string {
	return []string{
		r.Name,
		fmt.Sprint(r.TotalOperations),
		fmt.Sprint(r.FailedOperations),
		fmt.Sprint(r.GoawayErrors),
		fmt.Sprintf("%.2f%%", r.ErrorRate),
		Millis(r.P50Ms),
		Millis(r.P95Ms),
		Millis(r.P99Ms),
	}
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

// Table writes one row per result, in columns aligned with spaces.
func Table(w io.Writer, results []*load.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range results {
		fmt.Fprintln(tw, strings.Join(row(r), "\t"))
	}
	return tw.Flush()
}

// Markdown writes the same table as a Markdown table.
func Markdown(w io.Writer, results []*load.Result) error {
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(header)) + "\n")
	for _, r := range results {
		cells := row(r)
		for i, c := range cells {
			cells[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
