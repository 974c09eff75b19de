package e2e

import "syscall"

// groupAttr starts a process in a group of its own that gets SIGKILL when
// the test binary dies first.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
