package transport_test

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"testing"
)

// The facts that differ between Go 1.26 and Go 1.27 are pinned in
// facts_go126_test.go and facts_go127_test.go, chosen by build tags: Go
// 1.27 moved HTTP/2 into net/http, and golang.org/x/net/http2 wraps it there
// unless built with -tags http2legacy.

// getBodyResults sends a batch of POSTs through rt to a refusingUpstream,
// each request with a GetBody of its own, and returns every GetBody result
// handed out.
func getBodyResults(t *testing.T, rt func(*upstream) http.RoundTripper) []*trackedBody {
	t.Helper()
	u := refusingUpstream(t)
	var (
		mu  sync.Mutex
		all []*trackedBody // guarded by mu
	)
	getBody := func(b testBody) func() (io.ReadCloser, error) {
		return func() (io.ReadCloser, error) {
			tb := &trackedBody{Reader: bytes.NewReader(b.data)}
			mu.Lock()
			all = append(all, tb)
			mu.Unlock()
			return tb, nil
		}
	}
	errs := factRun(t, rt(u), u, getBody)
	if len(errs) != 0 {
		t.Errorf("%d requests failed with GetBody set; the first: %v", len(errs), errs[0])
	}
	mu.Lock()
	defer mu.Unlock()
	if len(all) == 0 {
		t.Fatal("GetBody was never called: no request met a GOAWAY")
	}
	return all
}

// abandoned counts the results that were never read and never closed.
func abandoned(all []*trackedBody) int {
	n := 0
	for _, tb := range all {
		if !tb.read.Load() && !tb.closed.Load() {
			n++
		}
	}
	return n
}
