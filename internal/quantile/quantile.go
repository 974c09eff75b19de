// Package quantile computes quantiles of latency samples, for the
// benchmarks and the demo's reports.
package quantile

import (
	"math"
	"time"
)

// Of returns the q-quantile (0 < q <= 1) of sorted, an ascending slice, by
// the nearest-rank method: the smallest sample with at least a fraction q of
// the samples at or below it. It returns 0 for no samples.
func Of(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
