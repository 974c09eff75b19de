package transport_test

import (
	"context"
	"testing"

	"github.com/teebody/teebody/pkg/transport"
)

// floorConfig is adaptive mode with the default floor.
func floorConfig() transport.Config {
	cfg := quietConfig()
	cfg.Adaptive = true
	return cfg
}

// With the floor, a quiet upstream's first GOAWAYs cost small writes
// nothing: their bodies are kept up to the floor, replayed, and the replays
// are the trace that turns the upstream hot. Without it (floor 0, logged for
// the contrast) the same writes pass through until a trace, and those that
// GOAWAY refused first get a 429.
func TestAdaptiveFloorKeepsSmallWrites(t *testing.T) {
	for _, tc := range []struct {
		name  string
		floor int64
	}{
		{"floor 64KiB", transport.DefaultAdaptiveFloorBytes},
		{"no floor", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := refusingUpstream(t) // refuses streams with a GOAWAY: replays are certain
			cfg := floorConfig()
			cfg.AdaptiveFloorBytes = tc.floor
			tr := transport.New(transportTo(t, u.srv), cfg)
			var answers answerLog
			f := newFront(t, false, newProxy(u, tr, answers.wrap(tr.ErrorHandler), nil))
			// 1 KiB writes, half with a Content-Length, half without.
			bodies := uniformBodies(16, requestCount(400), 1<<10, 1<<10)
			res := runLoad(context.Background(), f.client(t), f.srv.URL, bodies, 16)
			drain(t, tr)
			st := tr.Stats()
			t.Logf("%v; GOAWAYs sent %d; stats %+v", res, u.srv.Goaways(), st)
			if u.srv.Goaways() == 0 {
				t.Fatal("the upstream sent no GOAWAY")
			}
			// 429, or 502 for a resend that read its closed body.
			if retryLater, badGateway := answers.check(t); retryLater+badGateway != res.failed {
				t.Errorf("%d failed, %d answered by ErrorHandler: %v", res.failed, retryLater+badGateway, &answers)
			}
			if tc.floor > 0 {
				if res.failed != 0 {
					t.Errorf("%d small writes failed on a quiet upstream's first GOAWAY, want 0", res.failed)
				}
				if st.BufferedQuiet == 0 || st.PassedThrough.Quiet != 0 {
					t.Errorf("buffered quiet %d, passed through quiet %d; want > 0, 0", st.BufferedQuiet, st.PassedThrough.Quiet)
				}
				if st.ReplaysServed == 0 || st.AdaptiveUpstreams != 1 {
					t.Errorf("replays %d, hot upstreams %d: the replays must leave a trace", st.ReplaysServed, st.AdaptiveUpstreams)
				}
			}
		})
	}
}

// For a quiet upstream a body that announces more than the floor passes
// through; one that announces less, or nothing, is kept with the floor as its
// limit, so a quiet upstream holds at most the floor per request in flight.
func TestAdaptiveFloorBoundsQuietBodies(t *testing.T) {
	const floor = 16 << 10
	u := newUpstream(t, true, 0) // never sends GOAWAY: stays quiet
	cfg := floorConfig()
	cfg.AdaptiveFloorBytes = floor
	tr := transport.New(transportTo(t, u.srv), cfg)
	f := newFront(t, false, newProxy(u, tr, tr.ErrorHandler, nil))
	const workers = 8
	bodies := uniformBodies(17, requestCount(200), 0, 256<<10)
	res := runLoad(context.Background(), f.client(t), f.srv.URL, bodies, workers)
	drain(t, tr)
	st := tr.Stats()
	t.Logf("%v; stats %+v", res, st)
	if res.failed != 0 {
		t.Fatalf("%d requests failed: %v", res.failed, res.errs)
	}
	var small, largeKnown, unknown int64
	for _, b := range bodies {
		switch {
		case len(b.data) == 0 && b.known:
		case !b.known:
			unknown++
		case len(b.data) <= floor:
			small++
		default:
			largeKnown++
		}
	}
	if st.PassedThrough.Quiet != largeKnown || st.BufferedQuiet != small+unknown {
		t.Errorf("passed through quiet %d, buffered quiet %d; want %d (announced over the floor), %d",
			st.PassedThrough.Quiet, st.BufferedQuiet, largeKnown, small+unknown)
	}
	if st.PeakBytesHeld > workers*floor {
		t.Errorf("peak held %d with %d in flight, over the floor's %d each", st.PeakBytesHeld, workers, floor)
	}
	if st.ReplaysRefused.TooLarge != 0 || st.AdaptiveUpstreams != 0 {
		t.Errorf("stats %+v: a quiet upstream with no GOAWAY got no replay call and stays quiet", st)
	}
}
