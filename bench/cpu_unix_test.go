//go:build unix

package bench

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) this process has used so far.
// On a machine shared with other work it tells the cost of a transport more
// steadily than wall time does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// switches returns this process's voluntary context switches so far (a
// thread gave up its CPU: it blocked, in a futex, a sleep or a read) and its
// involuntary ones (the kernel took the CPU away).
func switches() (voluntary, involuntary int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return ru.Nvcsw, ru.Nivcsw
}
