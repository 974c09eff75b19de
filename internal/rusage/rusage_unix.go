//go:build unix

package rusage

import (
	"syscall"
	"time"
)

// CPU returns the CPU time (user and system) this process has used so far.
func CPU() time.Duration {
	ru := self()
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Switches returns this process's voluntary context switches so far (a
// thread gave up its CPU: it blocked, in a futex, a sleep or a read) and its
// involuntary ones (the kernel took the CPU away).
func Switches() (voluntary, involuntary int64) {
	ru := self()
	return ru.Nvcsw, ru.Nivcsw
}

// PageFaults returns this process's minor page faults so far: the pages the
// kernel mapped in when the process first touched them, without reading a
// disk. Memory that the process takes from the system anew costs one per
// page.
func PageFaults() int64 { return self().Minflt }

// self returns what getrusage says of this process, or zeros if it fails.
func self() syscall.Rusage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return syscall.Rusage{}
	}
	return ru
}
