package transport

import "sync/atomic"

// Stats is a snapshot of a Transport's counters and gauges. Counters only
// grow. Each field is read atomically, but the snapshot as a whole is not:
// Requests may briefly differ from the sum of its parts.
type Stats struct {
	// Requests counts every RoundTrip.
	Requests int64
	// Buffered counts the requests whose body got a replay buffer.
	Buffered int64
	// BufferedQuiet counts, of Buffered, the requests kept only up to
	// Config.AdaptiveFloorBytes (adaptive mode).
	BufferedQuiet int64
	// PassedThrough counts the requests handed on untouched, by reason.
	PassedThrough PassThroughStats
	// ReplaysServed counts the GetBody calls that returned a body.
	ReplaysServed int64
	// ReplaysRefused counts the GetBody calls that returned an error, by
	// reason.
	ReplaysRefused RefusalStats
	// BudgetRefusals counts the requests whose buffering the budget cut
	// short, once per request, whether or not GetBody was called.
	BudgetRefusals int64
	// RetryLaterWritten and BadGatewayWritten count the 429 and 502
	// answers of ErrorHandler and Responder.
	RetryLaterWritten, BadGatewayWritten int64
	// AdaptiveTraces counts the traces of GOAWAY that adaptive mode saw.
	AdaptiveTraces int64
	// AdaptiveUpstreams is how many upstreams adaptive mode buffers for now.
	AdaptiveUpstreams int64
	// BytesHeld is what the budget holds now, PeakBytesHeld the most it
	// has held. A shared budget's figures include other Transports' bodies,
	// as do its Yields.
	BytesHeld, PeakBytesHeld int64
	// BudgetBytes is the budget's size, or 0 if buffering is disabled.
	BudgetBytes int64
	// Yields counts the bodies that gave their budget back to smaller ones.
	Yields int64
}

// PassThroughStats counts the requests handed on untouched, one field per
// PassThroughReason.
type PassThroughStats struct {
	NoBody     int64
	GetBodySet int64
	Upgrade    int64
	Disabled   int64
	Quiet      int64
}

// RefusalStats counts the refused replays, one field per teebody.Reason of
// the same name.
type RefusalStats struct {
	TooLarge     int64
	NoBudget     int64
	StreamedPast int64
	Closed       int64
	Yielded      int64
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

// Stats returns a snapshot of t's counters and gauges. It is safe to call
// concurrently with RoundTrip, and cheap enough for every metrics scrape.
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
