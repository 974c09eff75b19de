package transport

import (
	"container/list"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxUpstreams bounds the upstreams that adaptive mode remembers. A proxy
// rarely talks to more; forgetting one costs only a few 429s again.
const maxUpstreams = 4096

// upstream identifies an upstream: the scheme and host (with its port unless
// that is the scheme's default) of an outgoing URL. A struct rather than
// "scheme://host" so that looking it up allocates nothing.
type upstream struct{ scheme, host string }

// upstreamOf returns the upstream of an outgoing URL, in one spelling per
// upstream: scheme and host lower-cased, the scheme's default port dropped.
// It allocates only when the URL has upper-case letters.
func upstreamOf(u *url.URL) upstream {
	if u == nil {
		return upstream{}
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	switch scheme {
	case "https":
		host = strings.TrimSuffix(host, ":443")
	case "http":
		host = strings.TrimSuffix(host, ":80")
	}
	return upstream{scheme, host}
}

// traces remembers when each upstream last left a trace of GOAWAY, for at
// most capacity upstreams. Recording a new one forgets first those whose
// window has passed and then, at capacity, the one whose latest trace is the
// oldest. Times come from time.Now (monotonic), so that a testing/synctest
// bubble controls them.
//
// A traces is safe for concurrent use. hot, asked for every request with a
// body, takes no lock and writes no shared memory (a sync.Map load and an
// atomic load), so requests never contend on it. record and count take mu;
// they run once per trace (a failed request or a served replay) and once
// per Stats call, and do O(1) work per call plus the forgetting of expired
// upstreams.
type traces struct {
	window   time.Duration // read-only
	capacity int           // read-only: the most upstreams remembered
	start    time.Time     // read-only: times are nanoseconds since start

	// m maps each remembered upstream to its *trace. It is read without a
	// lock; it is written only under mu, together with order.
	m sync.Map

	mu    sync.Mutex
	order list.List // guarded by mu: the *trace of each upstream in m, oldest trace first
}

// trace is an upstream's latest trace.
type trace struct {
	up   upstream      // read-only
	at   atomic.Int64  // nanoseconds since traces.start; written under traces.mu, read without it
	elem *list.Element // guarded by traces.mu: this trace in traces.order
}

func newTraces(window time.Duration, capacity int) *traces {
	return &traces{window: window, capacity: capacity, start: time.Now()}
}

func (s *traces) now() int64 { return int64(time.Since(s.start)) }

// live reports whether a trace at time at is still within the window at now.
func (s *traces) live(at, now int64) bool { return now-at < int64(s.window) }

// hot reports whether u left a trace within the window.
func (s *traces) hot(u upstream) bool {
	v, ok := s.m.Load(u)
	return ok && s.live(v.(*trace).at.Load(), s.now())
}

// record notes a trace of u now, renewing its window.
func (s *traces) record(u upstream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now() // under mu, so that order stays sorted by time
	if v, ok := s.m.Load(u); ok {
		tr := v.(*trace)
		tr.at.Store(now)
		s.order.MoveToBack(tr.elem)
		return
	}
	s.forgetExpiredLocked(now)
	if s.order.Len() >= s.capacity {
		s.forgetLocked(s.order.Front())
	}
	tr := &trace{up: u}
	tr.at.Store(now)
	tr.elem = s.order.PushBack(tr)
	s.m.Store(u, tr)
}

// count returns how many upstreams have a trace within the window now,
// forgetting the others.
func (s *traces) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetExpiredLocked(s.now())
	return s.order.Len()
}

func (s *traces) forgetExpiredLocked(now int64) {
	for e := s.order.Front(); e != nil && !s.live(e.Value.(*trace).at.Load(), now); e = s.order.Front() {
		s.forgetLocked(e)
	}
}

func (s *traces) forgetLocked(e *list.Element) {
	s.m.Delete(s.order.Remove(e).(*trace).up)
}
