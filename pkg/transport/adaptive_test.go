package transport_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/teebody/teebody/pkg/transport"
)

// adaptiveConfig is quietConfig in adaptive mode, without a floor: every
// request to a quiet upstream passes through (adaptivefloor_test.go tests
// the floor).
func adaptiveConfig() transport.Config {
	cfg := quietConfig()
	cfg.Adaptive = true
	cfg.AdaptiveFloorBytes = -1 // no floor
	return cfg
}

const statusRetryLater = "429 Too Many Requests"

// firstTrace sends a batch of bodies to target, a refusingUpstream, through
// client and returns what the client saw: the upstream's first connection
// refuses its requests, so tr must have a trace of GOAWAY after it.
func firstTrace(t *testing.T, tr *transport.Transport, client http.RoundTripper, target string) loadResult {
	t.Helper()
	r := runLoad(context.Background(), client, target, randomBodies(300, requestCount(200), 256<<10), 16)
	if st := tr.Stats(); st.AdaptiveTraces == 0 {
		t.Fatalf("no trace of GOAWAY after %v from an upstream that refused its first connection's requests; stats %+v", r, st)
	}
	return r
}

// TestAdaptiveGOAWAY: behind a ReverseProxy, an upstream that sends GOAWAY
// is quiet at first, so its requests pass through; the first GOAWAY that
// fails some of them gets those a 429 (a 502 only for a resend that read
// its closed body: answerLog) and leaves a trace; from then on every
// request to it is buffered and replayed, and none fails.
func TestAdaptiveGOAWAY(t *testing.T) {
	u := refusingUpstream(t)
	tr := transport.New(transportTo(t, u.srv), adaptiveConfig())
	var answers answerLog
	f := newFront(t, false, newProxy(u, tr, answers.wrap(tr.ErrorHandler), nil))
	client := f.client(t)
	stopScraping := scrapeStats(t, tr)
	defer stopScraping()

	first := firstTrace(t, tr, client, f.srv.URL)
	st := tr.Stats()
	t.Logf("until the first trace: %v; answers %v; stats %+v", first, &answers, st)
	retryLater, badGateway := answers.check(t)
	if first.failed == 0 || retryLater+badGateway != first.failed || int64(retryLater) != st.RetryLaterWritten {
		t.Errorf("%d requests failed, %d answered 429 and %d 502, ErrorHandler wrote %d 429s; want every failure answered",
			first.failed, retryLater, badGateway, st.RetryLaterWritten)
	}
	if st.PassedThrough.Quiet == 0 || st.AdaptiveUpstreams != 1 {
		t.Errorf("quiet %d, upstreams %d; want > 0, 1", st.PassedThrough.Quiet, st.AdaptiveUpstreams)
	}

	bodies := randomBodies(9, requestCount(600), 256<<10)
	then := runLoad(context.Background(), client, f.srv.URL, bodies, 16)
	drain(t, tr)
	st2 := tr.Stats()
	t.Logf("after it: %v; GOAWAYs sent %d; stats %+v", then, u.srv.Goaways(), st2)
	if then.failed != 0 {
		t.Errorf("%d requests failed after the first trace: %v", then.failed, then.errs)
	}
	if st2.PassedThrough.Quiet != st.PassedThrough.Quiet {
		t.Errorf("%d requests passed through as quiet after the first trace", st2.PassedThrough.Quiet-st.PassedThrough.Quiet)
	}
	if st2.Buffered == st.Buffered || st2.ReplaysServed == 0 || st2.AdaptiveTraces <= st.AdaptiveTraces {
		t.Errorf("buffered %d -> %d, replays %d, traces %d -> %d: the upstream's requests were not buffered and replayed",
			st.Buffered, st2.Buffered, st2.ReplaysServed, st.AdaptiveTraces, st2.AdaptiveTraces)
	}
	if n := u.wrong.Load(); n != 0 {
		t.Errorf("%d bodies arrived with wrong bytes", n)
	}
	f.checkLate(t)
}

// TestAdaptiveQuietHoldsNothing: side by side, the same load to an upstream
// that never sends GOAWAY; the always-on proxy holds bytes, the adaptive one
// holds none and buffers nothing.
func TestAdaptiveQuietHoldsNothing(t *testing.T) {
	bodies := randomBodies(11, requestCount(400), 256<<10)
	run := func(cfg transport.Config) transport.Stats {
		u := newUpstream(t, true, 0)
		tr := transport.New(transportTo(t, u.srv), cfg)
		f := newFront(t, false, newProxy(u, tr, tr.ErrorHandler, nil))
		r := runLoad(context.Background(), f.client(t), f.srv.URL, bodies, 16)
		drain(t, tr)
		if r.failed != 0 || u.wrong.Load() != 0 {
			t.Errorf("%v; wrong bytes %d", r, u.wrong.Load())
		}
		return tr.Stats()
	}
	always, adaptive := run(quietConfig()), run(adaptiveConfig())
	t.Logf("always-on: %+v", always)
	t.Logf("adaptive:  %+v", adaptive)
	if always.Buffered == 0 || always.PeakBytesHeld == 0 {
		t.Errorf("always-on buffered %d, peak held %d; want both > 0", always.Buffered, always.PeakBytesHeld)
	}
	if adaptive.Buffered != 0 || adaptive.PeakBytesHeld != 0 {
		t.Errorf("adaptive buffered %d, peak held %d; want 0, 0", adaptive.Buffered, adaptive.PeakBytesHeld)
	}
	if adaptive.PassedThrough.Quiet != always.Buffered {
		t.Errorf("adaptive passed %d through as quiet; want the %d that always-on buffered", adaptive.PassedThrough.Quiet, always.Buffered)
	}
	if adaptive.AdaptiveTraces != 0 || adaptive.AdaptiveUpstreams != 0 {
		t.Errorf("traces %d, upstreams %d; want 0, 0", adaptive.AdaptiveTraces, adaptive.AdaptiveUpstreams)
	}
}

// TestAdaptivePerUpstream: one Transport in front of two upstreams; the
// trace of the one that sends GOAWAY does not make the other's requests
// buffered.
func TestAdaptivePerUpstream(t *testing.T) {
	hot, quiet := refusingUpstream(t), newUpstream(t, true, 0)
	tr := transport.New(transportTo(t, hot.srv), adaptiveConfig()) // httptest's one certificate serves both
	fHot := newFront(t, false, newProxy(hot, tr, tr.ErrorHandler, nil))
	fQuiet := newFront(t, false, newProxy(quiet, tr, tr.ErrorHandler, nil))

	firstTrace(t, tr, fHot.client(t), fHot.srv.URL)
	before := tr.Stats()
	r := runLoad(context.Background(), fQuiet.client(t), fQuiet.srv.URL, randomBodies(12, requestCount(200), 64<<10), 16)
	after := tr.Stats()
	t.Logf("quiet upstream after the other's trace: %v; stats %+v", r, after)
	if r.failed != 0 {
		t.Errorf("quiet upstream: %v", r)
	}
	if after.Buffered != before.Buffered {
		t.Errorf("%d requests to the quiet upstream were buffered", after.Buffered-before.Buffered)
	}
	if q := after.PassedThrough.Quiet - before.PassedThrough.Quiet; q == 0 || q+after.PassedThrough.NoBody-before.PassedThrough.NoBody != int64(r.requests) {
		t.Errorf("%d of %d requests to the quiet upstream passed through as quiet", q, r.requests)
	}
	if after.AdaptiveUpstreams != 1 {
		t.Errorf("AdaptiveUpstreams = %d, want 1", after.AdaptiveUpstreams)
	}

	r = runLoad(context.Background(), fHot.client(t), fHot.srv.URL, randomBodies(13, requestCount(200), 64<<10), 16)
	drain(t, tr)
	last := tr.Stats()
	if r.failed != 0 || last.Buffered == after.Buffered || last.PassedThrough.Quiet != after.PassedThrough.Quiet {
		t.Errorf("hot upstream again: %v; buffered %d -> %d, quiet %d -> %d; want no failure, buffered, none quiet",
			r, after.Buffered, last.Buffered, after.PassedThrough.Quiet, last.PassedThrough.Quiet)
	}
}

// TestAdaptiveOff: without Adaptive, nothing of adaptive mode shows: every
// request with a body is buffered, also to a quiet upstream, and GOAWAYs
// leave no trace; the defaults leave it off.
func TestAdaptiveOff(t *testing.T) {
	if transport.DefaultConfig().Adaptive {
		t.Fatal("DefaultConfig is adaptive")
	}
	for _, refusing := range []bool{false, true} {
		u := newUpstream(t, true, 0)
		if refusing {
			u = refusingUpstream(t)
		}
		tr := transport.New(transportTo(t, u.srv), quietConfig())
		f := newFront(t, false, newProxy(u, tr, tr.ErrorHandler, nil))
		r := runLoad(context.Background(), f.client(t), f.srv.URL, randomBodies(14, requestCount(400), 256<<10), 16)
		drain(t, tr)
		st := tr.Stats()
		t.Logf("refusing %v: %v; stats %+v", refusing, r, st)
		if r.failed != 0 || st.Buffered == 0 || st.Buffered+st.PassedThrough.NoBody != st.Requests {
			t.Errorf("refusing %v: %v, buffered %d of %d (%d without body); want every request with a body buffered",
				refusing, r, st.Buffered, st.Requests, st.PassedThrough.NoBody)
		}
		if st.PassedThrough.Quiet != 0 || st.AdaptiveTraces != 0 || st.AdaptiveUpstreams != 0 {
			t.Errorf("refusing %v: quiet %d, traces %d, upstreams %d; want 0", refusing, st.PassedThrough.Quiet, st.AdaptiveTraces, st.AdaptiveUpstreams)
		}
		if refusing && st.ReplaysServed == 0 {
			t.Error("no replay served: the run did not exercise a GOAWAY")
		}
	}
	// That disabled buffering wins over adaptive mode is
	// TestUnbufferedGoawayAnswersRetryLater's.
}
