package transport

import "sync/atomic"

// Stats is a snapshot of a Transport's counters (monotonic since New) and
// gauges (AdaptiveUpstreams, BytesHeld, PeakBytesHeld, which only grows, and
// BudgetBytes, fixed at New). Each field is read atomically, but the
// snapshot as a whole is not: counters may move between fields, so
// Requests may briefly differ from the sum of its parts.
type Stats struct {
	// Requests counts every RoundTrip.
	Requests int64
	// Buffered counts the requests whose body got a replay buffer.
	Buffered int64
	// BufferedQuiet counts, of Buffered, the requests to an upstream
	// without a trace of GOAWAY, kept only up to Config.AdaptiveFloorBytes
	// (adaptive mode).
	BufferedQuiet int64
	// PassedThrough counts the requests handed on untouched, by reason.
	PassedThrough PassThroughStats
	// ReplaysServed counts the GetBody calls that returned a body.
	ReplaysServed int64
	// ReplaysRefused counts the GetBody calls that returned an error
	// matching teebody.ErrNotReplayable, by reason.
	ReplaysRefused RefusalStats
	// BudgetRefusals counts the requests whose buffering the shared budget
	// cut short (they streamed on and lost only their replay), once per
	// request, counted at its end whether or not a retry was attempted.
	// ReplaysRefused.NoBudget counts GetBody calls instead: none for such a
	// request that no GOAWAY met, one or more for one that was retried. A
	// body that yielded its budget counts in Yields, not here.
	BudgetRefusals int64
	// RetryLaterWritten counts the 429 answers written by ErrorHandler
	// (and by the ErrorResponder of Responder).
	RetryLaterWritten int64
	// BadGatewayWritten counts the 502 answers written by ErrorHandler (and
	// by the ErrorResponder of Responder): errors that did not mean the
	// body could not be replayed.
	BadGatewayWritten int64
	// AdaptiveTraces counts the traces of GOAWAY that adaptive mode saw:
	// requests that failed with an error for which ShouldRetryLater is
	// true, and replays served (one GOAWAY may leave several). Always 0
	// without Config.Adaptive.
	AdaptiveTraces int64
	// AdaptiveUpstreams is how many upstreams adaptive mode buffers for
	// now: those with a trace within the window (at most 4096).
	AdaptiveUpstreams int64
	// BytesHeld is what the budget holds now; PeakBytesHeld the most it has
	// held. With a Budget shared through Config.Budget (or by Wrap), they
	// are the budget's figures, not this Transport's alone.
	BytesHeld, PeakBytesHeld int64
	// BudgetBytes is the budget's size, fixed at New: Config.TotalBytes,
	// or the shared budget's Total when Config.Budget is set (or Wrap
	// made one). 0 when the Config disables buffering.
	BudgetBytes int64
	// Yields counts the bodies that gave their share of the budget back to
	// smaller bodies and lost their replay (teebody.ReasonYielded): the
	// budget's figure, like BytesHeld (teebody.Budget.Yields), so with a
	// shared budget it includes other Transports' bodies. It counts bodies
	// when they yield; ReplaysRefused.Yielded counts this Transport's
	// GetBody calls refused because their body had yielded, so it stays
	// below Yields when few of those bodies meet a GOAWAY.
	Yields int64
}

// PassThroughStats counts requests handed to the inner RoundTripper
// untouched, by the first reason that applied, in this order.
type PassThroughStats struct {
	NoBody     int64 // Body nil or http.NoBody
	GetBodySet int64 // the caller set GetBody: it can replay by itself
	Upgrade    int64 // Upgrade, Connection: Upgrade or X-Stream-Protocol-Version
	Disabled   int64 // buffering disabled by the Config
	Quiet      int64 // adaptive mode: the upstream left no trace of GOAWAY within the window
}

// RefusalStats counts refused replays by teebody.Reason.
type RefusalStats struct {
	TooLarge     int64 // the body outgrew the per-request limit
	NoBudget     int64 // the shared budget was spent
	StreamedPast int64 // a response had arrived, so the bytes were being dropped
	Closed       int64 // the request was over
	Yielded      int64 // the shared budget took back what the body held, for a smaller body
}

// counters are the live fields behind Stats; every field is atomic.
type counters struct {
	requests, buffered, bufferedQuiet atomic.Int64
	passed                            [passThroughEnd]atomic.Int64 // by PassThroughReason
	replaysServed                     atomic.Int64
	refused                           [len(refusals)]atomic.Int64 // by teebody.Reason
	budgetRefusals, retryLaterWritten atomic.Int64
	badGatewayWritten                 atomic.Int64
	adaptiveTraces                    atomic.Int64
}

// Stats returns a snapshot of t's counters. It is safe to call concurrently
// with RoundTrip and cheap enough for every metrics scrape: atomic loads, and
// in adaptive mode the traces' mutex, under which it forgets the upstreams
// whose window has passed.
func (t *Transport) Stats() Stats {
	c := &t.counters
	s := Stats{
		Requests:          c.requests.Load(),
		Buffered:          c.buffered.Load(),
		BufferedQuiet:     c.bufferedQuiet.Load(),
		ReplaysServed:     c.replaysServed.Load(),
		BudgetRefusals:    c.budgetRefusals.Load(),
		RetryLaterWritten: c.retryLaterWritten.Load(),
		BadGatewayWritten: c.badGatewayWritten.Load(),
		AdaptiveTraces:    c.adaptiveTraces.Load(),
	}
	for r := PassThroughReason(1); r < passThroughEnd; r++ {
		*passThroughs[r].field(&s.PassedThrough) = c.passed[r].Load()
	}
	for r, field := range refusals {
		if field != nil {
			*field(&s.ReplaysRefused) = c.refused[r].Load()
		}
	}
	if t.traces != nil {
		s.AdaptiveUpstreams = int64(t.traces.count())
	}
	if t.budget != nil {
		s.BytesHeld = t.budget.InUse()
		s.PeakBytesHeld = t.budget.Peak()
		s.BudgetBytes = t.budget.Total()
		s.Yields = t.budget.Yields()
	}
	return s
}
