package transport_test

import (
	"context"
	"testing"

	"github.com/teebody/teebody/pkg/transport"
)

// TestUnbufferedGoawayAnswersRetryLater: with buffering disabled (adaptive
// mode or not), some requests a GOAWAY refuses through ReverseProxy fail
// every time. ErrorHandler answers 429 to every failure whose error proves
// that the upstream did not process the request: the HTTP/2 transport's
// "cannot retry err [... GOAWAY]" and net/http's "cannot rewind body". It
// answers 502 to a resend's read of the body that its first attempt closed
// (ReverseProxy's text on Go 1.26; on Go 1.27 "http: invalid Read on closed
// Body" over an HTTP/1 front and "body closed by handler" over an HTTP/2
// one): the resend had sent the request's headers
// (TestFactClosedBodyResendReachesUpstream). Those are rare (a few per
// thousand requests), so a run may not meet them; the kinds it met are
// logged.
func TestUnbufferedGoawayAnswersRetryLater(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "HTTP/1 front", true: "HTTP/2 front"}[h2], func(t *testing.T) {
			u := refusingUpstream(t)
			// Disabled (no budget): nothing is replayable, and adaptive mode
			// changes nothing.
			tr := transport.New(transportTo(t, u.srv), transport.Config{Disabled: true, Adaptive: true})
			var answers answerLog
			f := newFront(t, h2, newProxy(u, tr, answers.wrap(tr.ErrorHandler), nil))
			var total loadResult
			for i := range 3 {
				total.add(runLoad(context.Background(), f.client(t), f.srv.URL, randomBodies(uint64(500+i), requestCount(200), 256<<10), 16))
			}
			t.Logf("%d requests, %d failed %v; ErrorHandler's answers: %v", total.requests, total.failed, total.errs, &answers)
			if total.failed == 0 {
				t.Errorf("no request met a GOAWAY")
			}
			if retryLater, badGateway := answers.check(t); retryLater+badGateway != total.failed {
				t.Errorf("%d failed, %d answered by ErrorHandler", total.failed, retryLater+badGateway)
			}
			st := tr.Stats()
			if st.PassedThrough.Disabled == 0 {
				t.Errorf("PassedThrough.Disabled = 0, want > 0")
			}
			if st.PassedThrough.Quiet+st.AdaptiveTraces != 0 {
				t.Errorf("disabled, adaptive mode saw quiet requests or traces, want none: %+v", st)
			}
		})
	}
}
