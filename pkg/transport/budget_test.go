package transport_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// TestBudgetSpent runs concurrent large bodies through a proxy whose budget
// is tiny, to an upstream whose first connection refuses its streams with a
// GOAWAY. Nothing blocks on the budget; a request refused by a GOAWAY that
// could not be kept reaches the client (a Kubernetes API client) only as
// 429 + Retry-After with a Kubernetes Status body; and a client that sends such a write again ends
// with every write applied exactly once.
//
// Two rounds of 48 writes: in the first, another holder of the budget (a
// Tee sharing it, sealed, so it cannot yield) holds all of it, so the first
// write, which the first connection refuses, cannot have been kept and gets
// the 429, every run (and so does any other write a refusing connection
// meets); in the second, with the budget free, the writes compete for it
// among themselves (some kept, some yielding, some refused).
func TestBudgetSpent(t *testing.T) {
	u := refusingUpstream(t)
	cfg := quietConfig()
	cfg.PerRequestBytes = 128 << 10
	cfg.Budget = teebody.NewBudget(256 << 10)
	tr := transport.New(transportTo(t, u.srv), cfg)
	f := newFront(t, false, newProxy(u, tr, tr.Responder().Error, nil))
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
			resp, err := client.RoundTrip(newPost(context.Background(), f.srv.URL+"/api/v1/namespaces/default/configmaps", b, id))
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

	var ids []string
	// round sends 48 writes, the first alone if alone is set, so that the
	// proxy dials one connection for it, the upstream's first, which refuses
	// it. (Sent together, the first writes would make the proxy dial several
	// connections at once and use whichever is ready first.)
	round := func(round int, alone bool) {
		bodies := uniformBodies(uint64(400+round), 48, 64<<10, 128<<10)
		var wg sync.WaitGroup
		for i, b := range bodies {
			id := fmt.Sprintf("round%d-write%d", round, i)
			ids = append(ids, id)
			if i == 0 && alone {
				write(id, b)
				continue
			}
			wg.Go(func() { write(id, b) })
		}
		wg.Wait()
	}

	release := spendBudget(t, cfg.Budget)
	round(0, true)
	t.Logf("round 0: requests sent %d, 429s seen %d, GOAWAYs %d; stats %+v", sent.Load(), retryLater.Load(), u.srv.Goaways(), tr.Stats())
	if got, total := cfg.Budget.InUse(), cfg.Budget.Total(); got != total {
		t.Errorf("the other holder kept %d bytes of the budget through round 0, want all %d", got, total)
	}
	if retryLater.Load() == 0 {
		t.Error("no 429 in round 0, where the first connection refused a write that could not be kept")
	}
	release()
	round(1, false)
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
	if st.PeakBytesHeld > cfg.Budget.Total() {
		t.Errorf("peak bytes held %d > budget %d", st.PeakBytesHeld, cfg.Budget.Total())
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

// spendBudget makes another holder of b, a Tee that holds all of it and
// cannot yield any of it: it has kept a body of b.Total() bytes, read to the
// end by one follower, and is sealed with a newer follower that has read
// nothing, so every byte stays kept and it is out of the bodies that yield.
// release closes it, which gives the budget back; the end of the test does
// it too if the test did not.
func spendBudget(t *testing.T, b *teebody.Budget) (release func()) {
	t.Helper()
	done := make(chan struct{})
	tee := teebody.New(io.NopCloser(bytes.NewReader(make([]byte, b.Total()))),
		teebody.WithBudget(b), teebody.WithLimit(b.Total()), teebody.WithOnDone(func() { close(done) }))
	release = sync.OnceFunc(func() {
		if err := tee.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		<-done
	})
	t.Cleanup(release)
	first, err := tee.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := io.Copy(io.Discard, first); n != b.Total() || err != nil {
		t.Fatalf("the budget's other holder read %d bytes, %v; want %d", n, err, b.Total())
	}
	if _, err := tee.NewReader(); err != nil {
		t.Fatal(err)
	}
	tee.Seal()
	if got := b.InUse(); got != b.Total() {
		t.Fatalf("the budget's other holder keeps %d bytes, want all %d", got, b.Total())
	}
	return release
}
