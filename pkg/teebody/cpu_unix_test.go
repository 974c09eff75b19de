//go:build unix

package teebody_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) this process has used so far.
// On a machine shared with other work it tells a cost more steadily than
// wall time does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
