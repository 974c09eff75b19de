//go:build unix && !linux

package e2e

import "syscall"

// groupAttr starts a process in a group of its own. Only Linux can have it
// killed when the test binary dies first; elsewhere the cleanups stop it.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
