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
	w := &SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s's error log:\n%s", name, w.String())
		}
	})
	return log.New(w, "", log.Lmicroseconds)
}

// SyncBuffer is a bytes.Buffer that a command, server or logger writes to
// while a test reads it: Write and String are safe for concurrent use. The
// zero value is an empty buffer ready to use.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer // guarded by mu
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
