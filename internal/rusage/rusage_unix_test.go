//go:build unix

package rusage_test

import (
	"syscall"
	"testing"

	"github.com/teebody/teebody/internal/rusage"
)

// Touching memory that the process never had costs page faults, where they
// are measured.
func TestPageFaults(t *testing.T) {
	const size, hugePage = 8 << 20, 2 << 20
	before := rusage.PageFaults()
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(mem)
	for i := 0; i < size; i += 4096 {
		mem[i] = 1
	}
	after := rusage.PageFaults()
	if after == 0 {
		t.Skip("page faults are not measured here")
	}
	// One fault per page, or per huge page where the kernel maps those.
	if got, want := after-before, int64(size/hugePage); got < want {
		t.Errorf("touching %d MiB never touched before took %d page faults, want at least %d", size>>20, got, want)
	}
}
