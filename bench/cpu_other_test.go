//go:build !unix

package bench

import "time"

// cpuTime is not measured here: the cpu-s metric reads 0.
func cpuTime() time.Duration { return 0 }

// switches is not measured here: the context-switch metrics read 0.
func switches() (voluntary, involuntary int64) { return 0, 0 }
