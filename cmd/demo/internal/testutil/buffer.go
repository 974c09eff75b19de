package testutil

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer that a command or server writes to while the
// test reads it: Write and String are safe for concurrent use. The zero
// value is an empty buffer ready to use.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer // guarded by mu
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
