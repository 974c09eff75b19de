package goawaytest_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"

	"github.com/teebody/teebody/pkg/goawaytest"
)

// remotes is a handler that records the client addresses it serves from,
// one per connection.
type remotes struct {
	mu    sync.Mutex
	addrs map[string]int
}

func (h *remotes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.addrs == nil {
		h.addrs = map[string]int{}
	}
	h.addrs[r.RemoteAddr]++
}

// counts returns how many requests each connection served, in no order.
func (h *remotes) counts() map[int]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[int]int{}
	for _, n := range h.addrs {
		out[n]++
	}
	return out
}

// getN sends n GET requests to s, one at a time, each to a path of its own.
func getN(t *testing.T, s *goawaytest.Server, n int) {
	t.Helper()
	for i := range n {
		if got, err := send(t, s, "GET", fmt.Sprintf("/%d", i), "", false); err != nil || got != "200 OK " {
			t.Fatalf("request %d: %q, %v", i, got, err)
		}
	}
}

// EndAfter(3) serves three requests on each connection: sent one at a
// time, nine requests use three connections, and none is refused.
func TestEndAfter(t *testing.T) {
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) {
			h := new(remotes)
			s := sv.start(h, goawaytest.EndAfter(3))
			defer s.Close()
			getN(t, s, 9)
			if got := h.counts(); len(got) != 1 || got[3] != 3 {
				t.Errorf("connections by requests served: %v, want three of 3", got)
			}
			wantStats(t, s, goawaytest.Stats{Requests: 9, Refusals: 0, Goaways: 3})
		})
	}
}

// EndAfter(0), as no option, ends no connection.
func TestEndAfterZero(t *testing.T) {
	h := new(remotes)
	s := goawaytest.NewServer(h, goawaytest.EndAfter(0))
	defer s.Close()
	getN(t, s, 5)
	if got := h.counts(); len(got) != 1 || got[5] != 1 {
		t.Errorf("connections by requests served: %v, want one of 5", got)
	}
	wantStats(t, s, goawaytest.Stats{Requests: 5})
}

// EndChance ends the connection of the requests whose draw from its
// generator falls below p, one draw per request: the same generator, drawn
// alongside, predicts every GOAWAY.
func TestEndChance(t *testing.T) {
	for _, p := range []float64{0, 0.3, 1} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			const n = 30
			twin := rand.New(rand.NewPCG(7, 8))
			var want int64
			for range n {
				if twin.Float64() < p {
					want++
				}
			}
			s := goawaytest.NewServer(http.HandlerFunc(echo), goawaytest.EndChance(p, rand.New(rand.NewPCG(7, 8))))
			defer s.Close()
			getN(t, s, n)
			wantStats(t, s, goawaytest.Stats{Requests: n, Goaways: want})
			if p == 0.3 && (want == 0 || want == n) {
				t.Errorf("%d of %d ended: the seed tests nothing", want, n)
			}
		})
	}
}

// EndChance without a generator draws from a fixed seed: two servers end
// the same connections.
func TestEndChanceFixedSeed(t *testing.T) {
	var got []goawaytest.Stats
	for range 2 {
		s := goawaytest.NewServer(http.HandlerFunc(echo), goawaytest.EndChance(0.3, nil))
		getN(t, s, 30)
		s.Close()
		got = append(got, s.Stats())
	}
	if got[0] != got[1] || got[0].Goaways == 0 {
		t.Errorf("Stats() = %+v and %+v, want the same, with a GOAWAY", got[0], got[1])
	}
}

// With EndAfter too, EndChance still draws once per request: the requests
// that EndAfter ends draw as well.
func TestEndChanceWithEndAfter(t *testing.T) {
	const n, after, p = 30, 3, 0.3
	// ends returns how many connections n requests sent one at a time end,
	// each request drawing from a generator seeded as the server's unless
	// EndAfter ends its connection and skip is set.
	ends := func(skip bool) int64 {
		twin := rand.New(rand.NewPCG(7, 8))
		var ended int64
		served := 0
		for range n {
			served++
			end := served == after
			if !(end && skip) && twin.Float64() < p {
				end = true
			}
			if end {
				ended, served = ended+1, 0
			}
		}
		return ended
	}
	want := ends(false)
	if want == ends(true) {
		t.Fatalf("%d connections end either way: the seed tests nothing", want)
	}
	s := goawaytest.NewServer(http.HandlerFunc(echo), goawaytest.EndAfter(after), goawaytest.EndChance(p, rand.New(rand.NewPCG(7, 8))))
	defer s.Close()
	getN(t, s, n)
	wantStats(t, s, goawaytest.Stats{Requests: n, Goaways: want})
}
