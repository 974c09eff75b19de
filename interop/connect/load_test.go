package connect_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/teebody/teebody/pkg/transport"
)

// The load of one run: up to loadCalls calls, a third of each kind, from
// loadWorkers callers that share one http.Client, to loadUpstreams
// upstreams of which one restarts every restartEvery, in turn. No call
// starts after loadTime, so that a slow machine (-race, two busy cores)
// makes fewer calls, not longer runs.
const (
	loadCalls     = 3000
	loadWorkers   = 12
	loadUpstreams = 3
	loadTime      = 2 * time.Second
	restartEvery  = 20 * time.Millisecond
	callTimeout   = 10 * time.Second // a bound, not a wait
)

// loadResult is what one run saw.
type loadResult struct {
	calls  [kinds]int // calls made
	failed [kinds]int // calls that failed
	// lost counts the failed calls that the upstream never applied and
	// whose error proves that it did not process them
	// (transport.ShouldRetryLater): the calls a GOAWAY cost.
	lost [kinds]int
	// unproven counts the failed calls that the upstream never applied,
	// with connect's Unavailable but no such proof: net/http resent a
	// refused stream whose pipe the first attempt had closed, and the call
	// failed with "io: read/write on closed pipe".
	unproven  [kinds]int
	codes     map[connect.Code]int // failures by connect code
	firstErrs []string             // the first few failures
	otherErrs []string             // the first few failures not lost to a GOAWAY
	server    tally
	restarts  int64
	forced    int64
	stats     transport.Stats // teebody's, in its arm
	took      time.Duration
}

func (r loadResult) total(counts [kinds]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// streaming returns the figures of the two streaming kinds together.
func streaming(counts [kinds]int) int { return counts[upload] + counts[chat] }

// runLoad runs the load over p, through teebody's transport when fixed and
// through the plain one otherwise.
func runLoad(t *testing.T, p proto, fixed bool) loadResult {
	t.Helper()
	led := newLedger()
	var ups [loadUpstreams]*upstream
	for i := range ups {
		ups[i] = newUpstream(t, p, led.handler())
	}
	inner := p.transport()
	var rt http.RoundTripper = inner
	var tr *transport.Transport
	if fixed {
		tr = transport.New(inner, transport.DefaultConfig())
		rt = tr
	}
	hc := &http.Client{Transport: rt}
	var cs [loadUpstreams]*clients
	for i, u := range ups {
		cs[i] = newClients(hc, u.base)
	}

	// The rolling restart: one upstream every restartEvery, in turn.
	stop := make(chan struct{})
	var restarter sync.WaitGroup
	restarter.Go(func() {
		tick := time.NewTicker(restartEvery)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
				ups[i%len(ups)].restart()
			}
		}
	})

	res := loadResult{codes: map[connect.Code]int{}}
	var mu sync.Mutex // guards res
	var next atomic.Uint64
	start := time.Now()
	deadline := start.Add(loadTime)
	var workers sync.WaitGroup
	for range loadWorkers {
		workers.Go(func() {
			for time.Now().Before(deadline) {
				id := next.Add(1)
				if id > loadCalls {
					return
				}
				k := kind(id % uint64(kinds))
				c := cs[(id/uint64(kinds))%loadUpstreams]
				ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
				err := c.call(ctx, k, id)
				cancel()
				mu.Lock()
				res.calls[k]++
				if err != nil {
					res.failed[k]++
					res.codes[connect.CodeOf(err)]++
					applied := led.timesApplied(id)
					if transport.ShouldRetryLater(err) && applied == 0 {
						res.lost[k]++
					} else {
						if connect.CodeOf(err) == connect.CodeUnavailable && applied == 0 {
							res.unproven[k]++
						}
						if len(res.otherErrs) < 5 {
							res.otherErrs = append(res.otherErrs, fmt.Sprintf("%v call %d (applied %d times): %v", k, id, applied, err))
						}
					}
					if len(res.firstErrs) < 3 {
						res.firstErrs = append(res.firstErrs, fmt.Sprintf("%v call %d: %v", k, id, err))
					}
				}
				mu.Unlock()
			}
		})
	}
	workers.Wait()
	res.took = time.Since(start)
	close(stop)
	restarter.Wait()

	// The clients close their idle connections before the servers shut
	// down, which would wait for them.
	inner.CloseIdleConnections()
	for _, u := range ups {
		u.close()
		res.restarts += u.restarts.Load()
		res.forced += u.forced.Load()
	}
	led.running.Wait()
	res.server = led.tally()
	if tr != nil {
		res.stats = tr.Stats()
	}
	return res
}

// log logs what a run saw.
func (r loadResult) log(t *testing.T, arm string, run int) {
	t.Helper()
	t.Logf("%s run %d: %d calls in %v across %d restarts (%d forced): failed %v of %v (unary, client-streaming, bidi), "+
		"lost to GOAWAY %v, unavailable without proof %v, codes %v; server: %d started, %d applied, %d started twice, %d applied twice, %d bad messages, %d cut short",
		arm, run, r.total(r.calls), r.took.Round(time.Millisecond), r.restarts, r.forced, r.failed, r.calls,
		r.lost, r.unproven, r.codes, r.server.started, r.server.applied, r.server.startedTwice, r.server.appliedTwice, r.server.bad, r.server.short)
	for _, e := range r.firstErrs {
		t.Logf("%s run %d: %s", arm, run, e)
	}
	for _, e := range r.otherErrs {
		t.Logf("%s run %d: not lost to a GOAWAY: %s", arm, run, e)
	}
}
