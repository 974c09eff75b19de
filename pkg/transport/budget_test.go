package transport_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/teebody/teebody/pkg/transport"
)

// TestBudgetSpent runs concurrent large bodies through a proxy whose budget
// is tiny, to an upstream that sends GOAWAYs often. Nothing blocks on the
// budget; a request refused by a GOAWAY that could not be kept reaches the
// client only as 429 + Retry-After with a Kubernetes Status body; and a
// client that sends such a write again ends with every write applied
// exactly once.
func TestBudgetSpent(t *testing.T) {
	u := newUpstream(t, true, 3)
	cfg := quietConfig()
	cfg.TotalBytes, cfg.PerRequestBytes = 256<<10, 128<<10
	tr := transport.New(transportTo(t, u.srv), cfg)
	f := newFront(t, false, newProxy(u, tr, tr.ErrorHandler, nil))
	client := f.client(t)

	var (
		sent, retryLater, failed atomic.Int64
		mu                       sync.Mutex
		failures                 []string // guarded by mu
	)
	// write sends one logical write until it is answered 200, sending it
	// again after each 429, as client-go does. It checks Retry-After but
	// does not wait it out: what this test proves does not depend on when
	// the write comes back, and no test sleeps.
	write := func(id string, b testBody) {
		for attempt := 0; attempt < 20; attempt++ {
			sent.Add(1)
			resp, err := client.RoundTrip(newPost(context.Background(), f.srv.URL, b, id))
			if err != nil {
				failed.Add(1)
				mu.Lock()
				failures = append(failures, err.Error())
				mu.Unlock()
				return
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case err == nil && resp.StatusCode == http.StatusOK:
				return
			case err == nil && resp.StatusCode == http.StatusTooManyRequests:
				retryLater.Add(1)
				checkStatusBody(t, body, 1)
				if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs != 1 {
					t.Errorf("Retry-After %q, want 1", resp.Header.Get("Retry-After"))
				}
			default:
				failed.Add(1)
				mu.Lock()
				failures = append(failures, fmt.Sprintf("%s %q %v", resp.Status, body, err))
				mu.Unlock()
				return
			}
		}
		failed.Add(1)
		mu.Lock()
		failures = append(failures, id+": still refused after 20 attempts")
		mu.Unlock()
	}

	// Rounds of 48 concurrent writes, until the budget has made at least one
	// GOAWAY-refused request unreplayable (at most 10 rounds).
	var ids []string
	for round := 0; round < 10 && retryLater.Load() == 0; round++ {
		bodies := uniformBodies(uint64(400+round), 48, 64<<10, 128<<10)
		var wg sync.WaitGroup
		for i, b := range bodies {
			id := fmt.Sprintf("round%d-write%d", round, i)
			ids = append(ids, id)
			wg.Go(func() { write(id, b) })
		}
		wg.Wait()
	}
	drain(t, tr)
	st := tr.Stats()
	t.Logf("writes %d, requests sent %d, 429s seen %d, failures %d, GOAWAYs %d; stats %+v",
		len(ids), sent.Load(), retryLater.Load(), failed.Load(), u.srv.Goaways(), st)

	if failed.Load() != 0 {
		t.Errorf("%d failures reached the client: %v", failed.Load(), failures)
	}
	// A replay the budget refused was either never kept (NoBudget) or given
	// up for a smaller body (Yielded).
	if byBudget := st.ReplaysRefused.NoBudget + st.ReplaysRefused.Yielded; retryLater.Load() == 0 || st.BudgetRefusals == 0 || byBudget == 0 {
		t.Errorf("429s %d, budget refusals %d, replays refused for budget %d: the budget was never the reason",
			retryLater.Load(), st.BudgetRefusals, byBudget)
	}
	if st.RetryLaterWritten != retryLater.Load() {
		t.Errorf("Stats.RetryLaterWritten = %d, but clients saw %d", st.RetryLaterWritten, retryLater.Load())
	}
	if st.PeakBytesHeld > cfg.TotalBytes {
		t.Errorf("peak bytes held %d > budget %d", st.PeakBytesHeld, cfg.TotalBytes)
	}
	if u.wrong.Load() != 0 {
		t.Errorf("%d bodies arrived with wrong bytes", u.wrong.Load())
	}
	applied := u.appliedCounts()
	for _, id := range ids {
		if applied[id] != 1 {
			t.Errorf("write %s applied %d times, want exactly once", id, applied[id])
		}
	}
	if len(applied) != len(ids) {
		t.Errorf("%d writes applied, %d sent", len(applied), len(ids))
	}
}
