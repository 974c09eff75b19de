package proxytest

import (
	"bytes"
	"io"
	"log"
	"sync"
	"testing"
)

// QuietLog returns a logger that discards everything, for the ErrorLog of
// servers and proxies whose expected errors (connections ended on purpose)
// would only clutter a test's output.
func QuietLog() *log.Logger { return log.New(io.Discard, "", 0) }

// FailureLog returns a logger that keeps what it is given and writes it to
// t's log, under name, at the end of t if t failed. It is safe for use after
// t ends.
func FailureLog(t testing.TB, name string) *log.Logger {
	w := &lockedBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s's error log:\n%s", name, w.String())
		}
	})
	return log.New(w, "", log.Lmicroseconds)
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer // guarded by mu
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
