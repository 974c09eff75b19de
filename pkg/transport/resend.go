package transport

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/teebody/teebody/pkg/teebody"
)

// The bounds of send's resends: six attempts in all, as Go's HTTP/2
// transport makes for a refused stream. quic-go resends a refused request
// once itself, so a request gives up after at most twelve refusals.
//
// The pause before resend n is drawn from [b/2, b] with b =
// resendBackoff·2ⁿ⁻¹: 5–10, 10–20, 20–40, 40–80 and 80–160 ms, at most
// 310 ms in all. A GOAWAY is over once the client has a new connection, so
// only an upstream that refuses again and again (a rolling restart) needs
// a pause; the jitter spreads out the requests that one restart refused.
const (
	resendAttempts = 6
	resendBackoff  = 10 * time.Millisecond
)

// send hands out, the copy of a buffered request, to the inner
// RoundTripper. While the inner RoundTripper fails it with an error that
// proves the upstream did not process it (resendable), send
// sends it again, up to resendAttempts in all, after a pause (resendPause)
// that the request's context cuts short. Each resend reads the body that
// out.GetBody gives, a new follower. When the Tee cannot give one, send
// returns an error matching teebody.ErrNotReplayable that wraps the
// upstream's, for a 429. Otherwise it returns what the last attempt
// returned.
//
// A failed attempt's body is closed before the next attempt starts, so that
// a write of it still under way in the inner transport ends. The inner
// transport may leave other followers unclosed, such as one from GetBody
// for a stream it never opened. They hold nothing: a follower needs no
// Close for its Tee to end (teebody.Tee.NewReader), and only the newest
// one, the next attempt's, keeps bytes from being dropped.
func (t *Transport) send(out *http.Request) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		resp, err := t.inner.RoundTrip(out)
		if err == nil || attempt == resendAttempts || !resendable(err) && plant != plantResend {
			if err != nil && plant == plantRetryLater {
				err = fmt.Errorf("%w (planted: %v)", teebody.ErrNotReplayable, err) // one %w: a join proves only if each branch does
			}
			return resp, err
		}
		if resp != nil && resp.Body != nil {
			resp.Body.Close() // a broken RoundTripper: never both (net/http's contract)
		}
		if !resendPause(out, attempt) {
			return nil, err
		}
		body, rerr := out.GetBody()
		if rerr != nil {
			return nil, fmt.Errorf("%w (the upstream did not process the request: %w)", rerr, err)
		}
		next := *out
		next.Body = body
		out.Body.Close()
		out = &next
		traceResend(out.Context(), err)
	}
}

// resendPause waits before resend number n of out (1 for the second
// attempt). It returns false, at once, if out's context ends first.
func resendPause(out *http.Request, n int) bool {
	ctx := out.Context()
	if ctx.Err() != nil {
		return false
	}
	d := resendBackoff << (n - 1)
	d = d/2 + rand.N(d/2+1)
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
