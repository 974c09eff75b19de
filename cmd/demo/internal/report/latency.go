package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/teebody/teebody/cmd/demo/internal/load"
)

// Delta is how much larger got is than base, in percent; 0 when base is 0.
func Delta(got, base float64) float64 {
	if base == 0 {
		return 0
	}
	return 100 * (got - base) / base
}

// Latency writes, for each result after the first, its percentiles
// relative to the first's: a comparison of single runs, as good as the
// runs are alike.
func Latency(w io.Writer, results []*load.Result) error {
	if len(results) < 2 {
		return nil
	}
	base := results[0]
	var b strings.Builder
	fmt.Fprintf(&b, "Latency against %s (p50 %s, p95 %s, p99 %s):\n", base.Name, Millis(base.P50Ms), Millis(base.P95Ms), Millis(base.P99Ms))
	for _, r := range results[1:] {
		fmt.Fprintf(&b, "  %s: p50 %+.1f%%, p95 %+.1f%%, p99 %+.1f%%\n", r.Name,
			Delta(r.P50Ms, base.P50Ms), Delta(r.P95Ms, base.P95Ms), Delta(r.P99Ms, base.P99Ms))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary writes one sentence per result: what failed, and how.
func Summary(w io.Writer, results []*load.Result) error {
	var b strings.Builder
	for _, r := range results {
		fmt.Fprintf(&b, "%s: %d of %d operations failed (%.2f%%), %d of them on a GOAWAY, in %.1fs with %d workers against %s (%s).\n",
			r.Name, r.FailedOperations, r.TotalOperations, r.ErrorRate, r.GoawayErrors, r.DurationSeconds, r.Workers,
			r.APIServerURL, r.ServerVersion)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
