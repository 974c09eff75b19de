package transport

import (
	"fmt"
	"net/url"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func host(i int) upstream { return upstream{"https", fmt.Sprintf("h%d.example:443", i)} }

// TestTracesWindow pins the window on the fake clock: an upstream is hot
// from its trace until exactly the window has passed, and each trace renews
// it.
func TestTracesWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTraces(time.Hour, 8)
		a, b := host(1), host(2)
		if s.hot(a) || s.count() != 0 {
			t.Fatal("an upstream without a trace is hot")
		}
		s.record(a)
		if !s.hot(a) || s.hot(b) || s.count() != 1 {
			t.Fatalf("after a's trace: hot(a)=%v hot(b)=%v count=%d; want true false 1", s.hot(a), s.hot(b), s.count())
		}
		time.Sleep(time.Hour - time.Nanosecond)
		if !s.hot(a) {
			t.Fatal("a cooled before its window passed")
		}
		s.record(a) // renews: the window now ends an hour from here
		time.Sleep(time.Hour - time.Nanosecond)
		if !s.hot(a) {
			t.Fatal("a renewed trace did not renew the window")
		}
		time.Sleep(time.Nanosecond)
		if s.hot(a) || s.count() != 0 {
			t.Fatalf("a window later: hot(a)=%v count=%d; want false 0", s.hot(a), s.count())
		}
		s.record(a) // an expired upstream comes back with a new trace
		if !s.hot(a) || s.count() != 1 {
			t.Fatal("a fresh trace after expiry did not make the upstream hot again")
		}
	})
}

// TestAdaptiveWindowConfig: the Transport's traces take Config.AdaptiveWindow,
// DefaultAdaptiveWindow when it is not positive, so that TestTracesWindow's
// clock holds for RoundTrip's question.
func TestAdaptiveWindowConfig(t *testing.T) {
	for _, tc := range []struct{ set, want time.Duration }{
		{0, DefaultAdaptiveWindow}, {-time.Second, DefaultAdaptiveWindow}, {time.Minute, time.Minute},
	} {
		cfg := DefaultConfig()
		cfg.Adaptive, cfg.AdaptiveWindow = true, tc.set
		if got := New(nil, cfg).traces.window; got != tc.want {
			t.Errorf("AdaptiveWindow %v: the traces' window is %v, want %v", tc.set, got, tc.want)
		}
	}
}

// TestTracesBound pins eviction: at capacity, a new upstream first displaces
// those past their window, else the one with the oldest trace, so that a
// recently renewed one stays.
func TestTracesBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTraces(time.Hour, 3)
		for i := range 3 {
			s.record(host(i))
			time.Sleep(time.Minute)
		}
		s.record(host(0)) // renewed: host(1) has the oldest trace now
		s.record(host(3))
		for i, want := range []bool{true, false, true, true} {
			if got := s.hot(host(i)); got != want {
				t.Errorf("hot(host %d) = %v, want %v", i, got, want)
			}
		}
		if n := s.order.Len(); n != 3 {
			t.Errorf("remembered %d upstreams, want 3", n)
		}

		time.Sleep(time.Hour - 30*time.Second) // host(2) expires, 0 and 3 stay
		s.record(host(4))
		for i, want := range []bool{true, false, false, true, true} {
			if got := s.hot(host(i)); got != want {
				t.Errorf("after expiry: hot(host %d) = %v, want %v", i, got, want)
			}
		}
		if _, ok := s.m.Load(host(2)); ok {
			t.Error("an expired upstream was kept while a new one was added")
		}
	})
}

// TestTracesBoundDefault fills the set far past maxUpstreams: it never
// remembers more, and the newest ones are all hot.
func TestTracesBoundDefault(t *testing.T) {
	s := newTraces(time.Hour, maxUpstreams)
	const n = maxUpstreams + 1000
	for i := range n {
		s.record(host(i))
	}
	if got := s.order.Len(); got != maxUpstreams {
		t.Fatalf("remembered %d upstreams, want %d", got, maxUpstreams)
	}
	if got := s.count(); got != maxUpstreams {
		t.Errorf("count() = %d, want %d", got, maxUpstreams)
	}
	for i := n - maxUpstreams; i < n; i++ {
		if !s.hot(host(i)) {
			t.Fatalf("host %d of the newest %d is not hot", i, maxUpstreams)
		}
	}
	if s.hot(host(0)) {
		t.Error("the oldest upstream was not forgotten")
	}
}

// TestTracesConcurrent records and asks from many goroutines at once, for
// the race detector; every upstream recorded ends hot, and the order stays
// sorted by time.
func TestTracesConcurrent(t *testing.T) {
	s := newTraces(time.Hour, 64)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				s.record(host(i % 32))
				s.hot(host((i + g) % 40))
				_ = s.count()
			}
		})
	}
	wg.Wait()
	for i := range 32 {
		if !s.hot(host(i)) {
			t.Errorf("host %d not hot", i)
		}
	}
	prev := int64(-1)
	for e := s.order.Front(); e != nil; e = e.Next() {
		at := e.Value.(*trace).at.Load()
		if at < prev {
			t.Fatalf("order not sorted by time: %d after %d", at, prev)
		}
		prev = at
	}
}

// BenchmarkTracesHot measures the question asked for every request with a
// body, from all Ps at once, over one upstream and over many.
func BenchmarkTracesHot(b *testing.B) {
	for _, n := range []int{1, 1024} {
		for _, hot := range []bool{false, true} {
			b.Run(fmt.Sprintf("upstreams=%d/hot=%v", n, hot), func(b *testing.B) {
				s := newTraces(time.Hour, maxUpstreams)
				keys := make([]upstream, n)
				for i := range keys {
					keys[i] = host(i)
					if hot {
						s.record(keys[i])
					}
				}
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						s.hot(keys[i%n])
						i++
					}
				})
			})
		}
	}
}

// BenchmarkTracesRecord measures renewing a known upstream (lock-free) and
// adding a new one to a full set (the copy under the lock).
func BenchmarkTracesRecord(b *testing.B) {
	b.Run("renew", func(b *testing.B) {
		s := newTraces(time.Hour, maxUpstreams)
		u := host(0)
		s.record(u)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				s.record(u)
			}
		})
	})
	b.Run("new-at-capacity", func(b *testing.B) {
		s := newTraces(time.Hour, maxUpstreams)
		keys := make([]upstream, 2*maxUpstreams)
		for i := range keys {
			keys[i] = host(i)
		}
		for i := range maxUpstreams {
			s.record(keys[i])
		}
		b.ReportAllocs()
		i := maxUpstreams
		for b.Loop() {
			s.record(keys[i%len(keys)])
			i++
		}
	})
}

// TestUpstreamOf: the spellings of one upstream are one key, so that its
// trace covers every request to it; different ports stay apart.
func TestUpstreamOf(t *testing.T) {
	same := [][]string{
		{"https://api.example", "https://API.Example:443", "HTTPS://api.example:443/apis/v1"},
		{"http://[::1]", "http://[::1]:80/x"},
		{"https://10.0.0.1:6443", "https://10.0.0.1:6443/api"},
	}
	seen := map[upstream]string{}
	for _, group := range same {
		var want upstream
		for i, raw := range group {
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			got := upstreamOf(u)
			if i == 0 {
				want = got
				if other, dup := seen[got]; dup {
					t.Errorf("%q and %q are one upstream %+v; want two", raw, other, got)
				}
				seen[got] = raw
			} else if got != want {
				t.Errorf("upstreamOf(%q) = %+v; want %+v, as for %q", raw, got, want, group[0])
			}
		}
	}
	for _, raw := range []string{"https://api.example:4430", "http://api.example", "https://api.example:80"} {
		u, _ := url.Parse(raw)
		if other, dup := seen[upstreamOf(u)]; dup {
			t.Errorf("%q and %q are one upstream; want two", raw, other)
		}
		seen[upstreamOf(u)] = raw
	}
}
