package proxytest_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

// Each calls f once per index, from no more goroutines than workers, and
// returns only when every call has returned.
func TestEach(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 4}, {1, 4}, {3, 8}, {100, 4}, {5, 1}} {
		calls := make([]int, tc.n)
		var live, peak atomic.Int64
		var mu sync.Mutex
		var returned atomic.Int64
		proxytest.Each(tc.n, tc.workers, func(i int) {
			n := live.Add(1)
			mu.Lock()
			calls[i]++
			if n > peak.Load() {
				peak.Store(n)
			}
			mu.Unlock()
			live.Add(-1)
			returned.Add(1)
		})
		if r := returned.Load(); r != int64(tc.n) {
			t.Errorf("n=%d workers=%d: Each returned after %d calls, want %d", tc.n, tc.workers, r, tc.n)
		}
		for i, c := range calls {
			if c != 1 {
				t.Errorf("n=%d workers=%d: f(%d) called %d times, want 1", tc.n, tc.workers, i, c)
			}
		}
		if p := peak.Load(); p > int64(tc.workers) {
			t.Errorf("n=%d workers=%d: %d calls at once, want at most %d", tc.n, tc.workers, p, tc.workers)
		}
	}
}
