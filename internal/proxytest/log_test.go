package proxytest_test

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

func TestQuietLog(t *testing.T) {
	l := proxytest.QuietLog()
	l.Printf("nothing to see")
	if w := l.Writer(); w != io.Discard {
		t.Errorf("QuietLog writes to %T, want io.Discard", w)
	}
}

// recordingTB is the part of a testing.TB that FailureLog uses, recorded.
type recordingTB struct {
	testing.TB
	failed   bool
	cleanups []func()
	logged   []string
}

func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Failed() bool     { return r.failed }
func (r *recordingTB) Logf(format string, args ...any) {
	r.logged = append(r.logged, fmt.Sprintf(format, args...))
}
func (r *recordingTB) end() {
	for _, f := range r.cleanups {
		f()
	}
}

func TestFailureLog(t *testing.T) {
	for _, failed := range []bool{false, true} {
		tb := &recordingTB{failed: failed}
		proxytest.FailureLog(tb, "upstream").Printf("timeout waiting for SETTINGS frames")
		tb.end()
		switch {
		case !failed && len(tb.logged) != 0:
			t.Errorf("a passing test logged %q", tb.logged)
		case failed && (len(tb.logged) != 1 || !strings.Contains(tb.logged[0], "upstream's error log:") ||
			!strings.Contains(tb.logged[0], "timeout waiting for SETTINGS frames")):
			t.Errorf("a failing test logged %q, want the upstream's line", tb.logged)
		}
	}
}
