//go:build !unix

package rusage

import "time"

// CPU is not measured here: it returns 0.
func CPU() time.Duration { return 0 }

// Switches are not measured here: they read 0.
func Switches() (voluntary, involuntary int64) { return 0, 0 }

// PageFaults are not measured here: they read 0.
func PageFaults() int64 { return 0 }
