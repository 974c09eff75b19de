package connect_test

import (
	"testing"
	"time"

	"github.com/teebody/teebody/pkg/transport"
)

// TestRollingRestartH2 and TestRollingRestartH2C make unary,
// client-streaming and bidi calls of connect-go to three upstreams
// restarted in turn with http.Server.Shutdown (see upstream), over HTTP/2
// with TLS and over h2c.
//
// connect-go sends a streaming call's body through an io.Pipe with no
// GetBody, so a stream that a restart's GOAWAY refuses cannot be sent
// again: through the plain transport some streaming calls fail with
// "unavailable: http2: Transport: cannot retry err [...]"
// (connectrpc/connect-go#672). The plain arm runs again until it loses one
// (up to plainRuns runs, none started after armTime), and fails if it never
// does. Each of its failures must be a call the server never applied, with
// that proof or at least connect's Unavailable: now and then net/http resends
// a refused stream whose pipe the first attempt has closed, and the call
// fails with "io: read/write on closed pipe". Through teebody's
// transport, in every run, no call fails, and the server applies every call
// once and checks every message. That arm runs again until the transport
// has served a replay (up to fixedRuns runs), so that the GOAWAYs are known
// to have refused some streams. connect-go sets GetBody on a unary call, so
// the transport passes those through: Stats.PassedThrough.GetBodySet
// counts each.
func TestRollingRestartH2(t *testing.T)  { testRollingRestart(t, h2) }
func TestRollingRestartH2C(t *testing.T) { testRollingRestart(t, h2c) }

// Each arm runs its load again until it shows what it must, up to its
// number of runs, and starts none after armTime: a run takes loadTime and
// the servers' last shutdowns, so a test takes about 20 s at most.
const (
	plainRuns = 4
	fixedRuns = 3
	armTime   = 6 * time.Second
)

func testRollingRestart(t *testing.T, p proto) {
	t.Run("plain", func(t *testing.T) {
		lost, runs := 0, 0
		for start := time.Now(); runs < plainRuns && lost == 0 && time.Since(start) < armTime; {
			runs++
			r := runLoad(t, p, false)
			r.log(t, "plain", runs)
			checkServer(t, r, false)
			if r.failed[unary] != 0 {
				t.Errorf("plain run %d: %d unary calls failed; connect-go sets GetBody on them, so Go resends them", runs, r.failed[unary])
			}
			if r.failed != sum(r.lost, r.unproven) {
				t.Errorf("plain run %d: failed %v, of which lost to a GOAWAY %v and unavailable unapplied %v; a restart cost more than its GOAWAY",
					runs, r.failed, r.lost, r.unproven)
			}
			lost = streaming(r.lost)
		}
		if lost == 0 {
			t.Errorf("plain: no streaming call lost in %d runs; the load no longer shows the failure", runs)
		}
	})
	t.Run("teebody", func(t *testing.T) {
		var replays int64
		runs := 0
		for start := time.Now(); runs < fixedRuns && replays == 0 && time.Since(start) < armTime; {
			runs++
			r := runLoad(t, p, true)
			r.log(t, "teebody", runs)
			st := r.stats
			replays = st.ReplaysServed
			t.Logf("teebody run %d: %d requests, %d buffered, %d unary passed through (GetBodySet), %d replays served, %d refused, peak %d bytes held",
				runs, st.Requests, st.Buffered, st.PassedThrough.GetBodySet, st.ReplaysServed, refused(st.ReplaysRefused), st.PeakBytesHeld)
			checkServer(t, r, true)
			if n := r.total(r.failed); n != 0 {
				t.Errorf("teebody run %d: %d calls failed (%v of unary, client-streaming, bidi); want none", runs, n, r.failed)
			}
			if got, want := st.PassedThrough.GetBodySet, int64(r.calls[unary]); got != want {
				t.Errorf("teebody run %d: Stats.PassedThrough.GetBodySet %d; want the %d unary calls", runs, got, want)
			}
			if got, want := st.Buffered, int64(streaming(r.calls)); got != want {
				t.Errorf("teebody run %d: Stats.Buffered %d; want the %d streaming calls", runs, got, want)
			}
			if got, want := st.Requests, int64(r.total(r.calls)); got != want {
				t.Errorf("teebody run %d: Stats.Requests %d; want the %d calls", runs, got, want)
			}
		}
		if replays == 0 {
			t.Errorf("teebody: no replay served in %d runs; the load no longer shows the fix", runs)
		}
	})
}

// checkServer checks what the server saw in a run: no call applied twice,
// every message intact, no stream cut short without an error, no restart
// forced; and with fixed, every call started and applied exactly once.
func checkServer(t *testing.T, r loadResult, fixed bool) {
	t.Helper()
	s := r.server
	if s.appliedTwice != 0 || s.bad != 0 || s.short != 0 {
		t.Errorf("%d calls applied twice, %d bad messages, %d streams cut short; want none", s.appliedTwice, s.bad, s.short)
	}
	if r.forced != 0 {
		t.Errorf("%d of %d Shutdowns reached their grace: a restart cost more than a GOAWAY", r.forced, r.restarts)
	}
	if r.restarts == 0 {
		t.Errorf("no restart during the load")
	}
	if fixed && (s.startedTwice != 0 || s.started != r.total(r.calls) || s.applied != r.total(r.calls)) {
		t.Errorf("the server started %d calls (%d twice) and applied %d; want each of the %d once",
			s.started, s.startedTwice, s.applied, r.total(r.calls))
	}
}

// sum returns the counts of a and b added kind by kind.
func sum(a, b [kinds]int) [kinds]int {
	for k := range a {
		a[k] += b[k]
	}
	return a
}

// refused returns the replays refused, all reasons together.
func refused(r transport.RefusalStats) int64 {
	return r.TooLarge + r.NoBudget + r.StreamedPast + r.Closed + r.Yielded
}
