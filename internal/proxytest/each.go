package proxytest

import (
	"sync"
	"sync/atomic"
)

// Each calls f(i) for every i in [0, n), from min(workers, n) goroutines
// that each take the next i as soon as their previous call returned, as a
// pool of clients sends a list of requests. It returns when every call has
// returned. f runs concurrently with itself: keep results by index.
func Each(n, workers int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		})
	}
	wg.Wait()
}
