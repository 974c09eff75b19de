package transport

import (
	"context"
	"errors"
	"io"
	"sync/atomic"

	"github.com/teebody/teebody/pkg/teebody"
)

// BodyTrace is a set of hooks to run at stages of a request body's life in
// a Transport. Any particular hook may be nil. Functions may be called
// concurrently from different goroutines, and some may be called after
// RoundTrip has returned. A hook must not panic: most run on goroutines
// that nothing recovers.
type BodyTrace struct {
	// PassedThrough is called when RoundTrip hands the request on
	// untouched, with the reason, before the inner RoundTripper gets it.
	// It is called on the goroutine that called RoundTrip.
	PassedThrough func(reason PassThroughReason)

	// BodyKept is called when RoundTrip keeps the body for replays,
	// before the first send. It is called on the goroutine that called
	// RoundTrip.
	BodyKept func()

	// SendStart is called when an attempt starts to send the body: at the
	// first Read of the body the attempt got, or when its response comes
	// first. attempt is 1 for the first send, 2 for the next, and so on.
	// It may be called from a different goroutine, the inner
	// RoundTripper's, and after RoundTrip has returned.
	SendStart func(attempt int)

	// GotReplay is called when GetBody hands out a replay of the body.
	// The inner RoundTripper may ask for more replays than it sends. It
	// is called on the goroutine that calls GetBody, which may differ
	// from RoundTrip's.
	GotReplay func()

	// ReplayRefused is called when GetBody finds no replay, with the
	// reason. It is called on the goroutine that calls GetBody, which may
	// differ from RoundTrip's.
	ReplayRefused func(reason teebody.Reason)

	// ReplayWithheld is called when GetBody refuses a replay for want of
	// proof that the upstream did not process the request: the request
	// was written on an HTTP/1 connection that failed. It is called on the
	// goroutine that calls GetBody.
	ReplayWithheld func()

	// Resend is called before RoundTrip sends the request again itself,
	// with the error of the attempt that the upstream did not process.
	// Only HTTP/3 errors lead to it: the HTTP/2 transport resends on its
	// own. It is called on the goroutine that called RoundTrip.
	Resend func(err error)

	// BodyReleased is called once the request is over and its buffer is
	// back in the budget. It may be called from a different goroutine,
	// such as the one closing the response body, which waits for it. It
	// may be called after RoundTrip has returned. Drain waits for it.
	BodyReleased func()
}

// WithBodyTrace returns a new context based on ctx. A Transport calls the
// hooks of trace for a request made with it, in addition to those of the
// traces ctx already carries. trace's hooks are called first. trace is
// not modified. A nil trace panics.
func WithBodyTrace(ctx context.Context, trace *BodyTrace) context.Context {
	if trace == nil {
		panic("transport: WithBodyTrace with a nil *BodyTrace")
	}
	return withHook(ctx, hooks{trace: trace})
}

// tracePassThrough calls the PassedThrough hooks of h, if any.
func tracePassThrough(h *hooks, reason PassThroughReason) {
	h.eachTrace(func(t *BodyTrace) {
		if t.PassedThrough != nil {
			t.PassedThrough(reason)
		}
	})
}

// traceResend calls the Resend hooks of ctx, if any.
func traceResend(ctx context.Context, err error) {
	hooksOf(ctx).eachTrace(func(t *BodyTrace) {
		if t.Resend != nil {
			t.Resend(err)
		}
	})
}

// requestTrace is the trace of one buffered request: the traces of its
// context, and the sends it has started. A nil *requestTrace, a request
// without traces, does nothing and costs nothing.
type requestTrace struct {
	ts     *hooks                     // holds a trace
	sends  atomic.Int32               // the SendStart calls made
	newest atomic.Pointer[tracedBody] // the body handed out last
}

// newRequestTrace returns the trace of a buffered request whose context
// has the hooks ts, and calls their BodyKept hooks. It returns nil if ts
// holds no trace.
func newRequestTrace(ts *hooks) *requestTrace {
	if !ts.hasTrace() {
		return nil
	}
	ts.eachTrace(func(t *BodyTrace) {
		if t.BodyKept != nil {
			t.BodyKept()
		}
	})
	return &requestTrace{ts: ts}
}

// released calls the BodyReleased hooks.
func (rt *requestTrace) released() {
	rt.ts.eachTrace(func(t *BodyTrace) {
		if t.BodyReleased != nil {
			t.BodyReleased()
		}
	})
}

// body returns follower, a body that the Tee handed out, as an attempt
// sends it: one that calls SendStart at its first Read. first is false
// for a replay, which calls GotReplay.
func (rt *requestTrace) body(follower io.ReadCloser, first bool) io.ReadCloser {
	if rt == nil {
		return follower
	}
	if !first {
		rt.ts.eachTrace(func(t *BodyTrace) {
			if t.GotReplay != nil {
				t.GotReplay()
			}
		})
	}
	b := &tracedBody{ReadCloser: follower, rt: rt}
	rt.newest.Store(b)
	return b
}

// withheld calls the ReplayWithheld hooks.
func (rt *requestTrace) withheld() {
	if rt == nil {
		return
	}
	rt.ts.eachTrace(func(t *BodyTrace) {
		if t.ReplayWithheld != nil {
			t.ReplayWithheld()
		}
	})
}

// refused calls the ReplayRefused hooks with the reason of err, a refusal
// of the Tee's.
func (rt *requestTrace) refused(err error) {
	if rt == nil {
		return
	}
	nre, ok := errors.AsType[teebody.NotReplayableError](err)
	if !ok {
		return
	}
	rt.ts.eachTrace(func(t *BodyTrace) {
		if t.ReplayRefused != nil {
			t.ReplayRefused(nre.Reason())
		}
	})
}

// answered marks the start of the newest body's send, when a response
// came before the inner RoundTripper read it.
func (rt *requestTrace) answered() {
	if rt == nil {
		return
	}
	if b := rt.newest.Load(); b != nil {
		b.start()
	}
}

// tracedBody is a body handed out to an attempt, which calls SendStart
// once, at its first Read or the response to its attempt.
type tracedBody struct {
	io.ReadCloser
	rt      *requestTrace
	started atomic.Bool
}

func (b *tracedBody) Read(p []byte) (int, error) {
	b.start()
	return b.ReadCloser.Read(p)
}

// start calls the SendStart hooks, the first time only.
func (b *tracedBody) start() {
	if b.started.Load() || !b.started.CompareAndSwap(false, true) {
		return
	}
	attempt := int(b.rt.sends.Add(1))
	b.rt.ts.eachTrace(func(t *BodyTrace) {
		if t.SendStart != nil {
			t.SendStart(attempt)
		}
	})
}
