package teebody

import (
	"errors"
	"io"
	"sync"
)

// errSourceClosed is what a scriptedSource's Read returns once it is closed.
var errSourceClosed = errors.New("scripted source closed")

// scriptedSource is a source body that a test feeds piece by piece. Its Read
// blocks, on channels (so that testing/synctest sees it as durably blocked),
// until the test feeds bytes, ends it, or the Tee closes it. It records what
// the Tee did to it.
type scriptedSource struct {
	mu      sync.Mutex
	queue   [][]byte      // fed but not yet read
	endErr  error         // set by end: returned once the queue is drained
	notify  chan struct{} // cap 1: something was fed or ended
	closeCh chan struct{} // closed by Close

	// holdClose, if not nil, makes Close wait until it is closed, as an
	// HTTP/1 server body's Close waits for a pending Read.
	holdClose chan struct{}

	// endWithLast makes the Read that drains the queue after end return the
	// end together with the last bytes, as net/http's bodies do.
	endWithLast bool

	reads           int // calls of Read
	readsAfterClose int // calls of Read that started after Close was called
	closes          int // calls of Close
	readsNow        int // Reads in progress
}

func newScriptedSource() *scriptedSource {
	return &scriptedSource{notify: make(chan struct{}, 1), closeCh: make(chan struct{})}
}

func (s *scriptedSource) poke() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// feed queues b to be read. It never blocks. An empty b is one Read that
// returns neither bytes nor an error.
func (s *scriptedSource) feed(b []byte) {
	s.mu.Lock()
	s.queue = append(s.queue, b)
	s.mu.Unlock()
	s.poke()
}

// end makes Read return err once the queue is drained.
func (s *scriptedSource) end(err error) {
	s.mu.Lock()
	s.endErr = err
	s.mu.Unlock()
	s.poke()
}

func (s *scriptedSource) Read(p []byte) (int, error) {
	s.mu.Lock()
	s.reads++
	if s.closes > 0 {
		s.readsAfterClose++
	}
	s.readsNow++
	defer func() {
		s.mu.Lock()
		s.readsNow--
		s.mu.Unlock()
	}()
	for {
		if len(s.queue) > 0 {
			n := copy(p, s.queue[0])
			if s.queue[0] = s.queue[0][n:]; len(s.queue[0]) == 0 {
				s.queue = s.queue[1:]
			}
			var err error
			if s.endWithLast && len(s.queue) == 0 {
				err = s.endErr
			}
			s.mu.Unlock()
			return n, err
		}
		if s.endErr != nil {
			s.mu.Unlock()
			return 0, s.endErr
		}
		s.mu.Unlock()
		select {
		case <-s.notify:
		case <-s.closeCh:
			return 0, errSourceClosed
		}
		s.mu.Lock()
	}
}

func (s *scriptedSource) Close() error {
	s.mu.Lock()
	s.closes++
	first := s.closes == 1
	s.mu.Unlock()
	if first {
		if s.holdClose != nil {
			<-s.holdClose
		}
		close(s.closeCh)
	}
	return nil
}

// stats returns the counters under the lock.
func (s *scriptedSource) stats() (reads, readsAfterClose, closes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads, s.readsAfterClose, s.closes
}

// closeRecorder wraps an io.Reader as a source body and counts its Closes.
type closeRecorder struct {
	io.Reader
	mu     sync.Mutex
	closes int
}

func (c *closeRecorder) Close() error {
	c.mu.Lock()
	c.closes++
	c.mu.Unlock()
	return nil
}

func (c *closeRecorder) closeCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closes
}
