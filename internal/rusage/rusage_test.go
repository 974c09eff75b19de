package rusage_test

import (
	"testing"
	"time"

	"github.com/teebody/teebody/internal/rusage"
)

// CPU time grows with work done, where it is measured.
func TestCPU(t *testing.T) {
	before := rusage.CPU()
	for start := time.Now(); time.Since(start) < 20*time.Millisecond; {
	}
	after := rusage.CPU()
	if after == 0 {
		t.Skip("CPU time is not measured here")
	}
	if after <= before {
		t.Errorf("CPU read %v, then %v after 20 ms of work", before, after)
	}
}

// Context switches do not go back.
func TestSwitches(t *testing.T) {
	v0, i0 := rusage.Switches()
	time.Sleep(time.Millisecond)
	v1, i1 := rusage.Switches()
	if v1 < v0 || i1 < i0 {
		t.Errorf("switches went back: %d, %d, then %d, %d", v0, i0, v1, i1)
	}
}
