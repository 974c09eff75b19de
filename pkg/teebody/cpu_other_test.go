//go:build !unix

package teebody_test

import "time"

// cpuTime is not measured here: BenchmarkYieldPolicy reports no cpu-ns/op.
func cpuTime() time.Duration { return 0 }
