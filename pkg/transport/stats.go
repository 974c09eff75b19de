package transport

import (
	"errors"
	"sync/atomic"

	"github.com/teebody/teebody/pkg/teebody"
)

// Stats is a snapshot of a Transport's counters, which only grow, and
// gauges. Each field is read atomically, but the snapshot as a whole is not.
type Stats struct {
	Requests        int64            // RoundTrip calls
	Buffered        int64            // requests whose body got a replay buffer
	BufferedQuiet   int64            // of Buffered, those kept only up to the adaptive floor
	PassedThrough   PassThroughStats // requests handed on untouched, by reason
	ReplaysServed   int64            // bodies handed out again, by GetBody or a resend
	ReplaysRefused  RefusalStats     // GetBody calls that found no replay, by reason
	ReplaysWithheld int64            // GetBody calls refused for want of proof: a written HTTP/1 request
	BudgetRefusals  int64            // requests whose body the budget had no room to keep (teebody.ReasonNoBudget)

	RetryLaterWritten int64 // 429 answers of ErrorHandler and Responder
	BadGatewayWritten int64 // 502 answers of ErrorHandler and Responder

	AdaptiveTraces    int64 // traces of GOAWAY that adaptive mode saw
	AdaptiveUpstreams int64 // gauge: upstreams that adaptive mode buffers for now

	// The budget's figures. A shared budget's include other Transports' bodies.
	BytesHeld     int64 // gauge: bytes held now
	PeakBytesHeld int64 // gauge: the most bytes held at once
	BudgetBytes   int64 // the budget's size; 0 if buffering is disabled
	Yields        int64 // bodies that gave their share to smaller bodies
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

// fields returns p's fields, indexed by reason.
func (p *PassThroughStats) fields() [passThroughEnd]*int64 {
	return [...]*int64{PassThroughNoBody: &p.NoBody, PassThroughGetBodySet: &p.GetBodySet,
		PassThroughUpgrade: &p.Upgrade, PassThroughDisabled: &p.Disabled, PassThroughQuiet: &p.Quiet}
}

// Count returns the requests that passed through for reason r, or 0 if r
// is no reason.
func (p PassThroughStats) Count(r PassThroughReason) int64 {
	if r <= 0 || r >= passThroughEnd {
		return 0
	}
	return *p.fields()[r]
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

// fields returns s's fields, indexed by teebody.Reason.
func (s *RefusalStats) fields() [refusalEnd]*int64 {
	return [...]*int64{teebody.ReasonTooLarge: &s.TooLarge, teebody.ReasonNoBudget: &s.NoBudget,
		teebody.ReasonStreamedPast: &s.StreamedPast, teebody.ReasonClosed: &s.Closed, teebody.ReasonYielded: &s.Yielded}
}

// Count returns the replays refused for reason r, or 0 if RefusalStats does
// not count r.
func (s RefusalStats) Count(r teebody.Reason) int64 {
	if r <= 0 || r >= refusalEnd {
		return 0
	}
	return *s.fields()[r]
}

// counters are the live fields behind Stats; every field is atomic.
type counters struct {
	requests, buffered, bufferedQuiet atomic.Int64
	passed                            [passThroughEnd]atomic.Int64 // by PassThroughReason
	replaysServed                     atomic.Int64
	replaysWithheld                   atomic.Int64
	refused                           [refusalEnd]atomic.Int64 // by teebody.Reason
	budgetRefusals, retryLaterWritten atomic.Int64
	badGatewayWritten                 atomic.Int64
	adaptiveTraces                    atomic.Int64
}

// countRefusal counts a GetBody call that err refused, under its reason.
// An error that is not a teebody.NotReplayableError is not counted: it does
// not match ErrNotReplayable, and ReplaysRefused counts only those.
func (t *Transport) countRefusal(err error) {
	if nre, ok := errors.AsType[teebody.NotReplayableError](err); ok && nre.Reason() > 0 && nre.Reason() < refusalEnd {
		t.counters.refused[nre.Reason()].Add(1)
	}
}

// Stats returns a snapshot of t's counters and gauges. It is safe to call
// concurrently with RoundTrip, and cheap enough for every metrics scrape.
func (t *Transport) Stats() Stats {
	t.initZero()
	c := &t.counters
	s := Stats{
		Requests:          c.requests.Load(),
		Buffered:          c.buffered.Load(),
		BufferedQuiet:     c.bufferedQuiet.Load(),
		ReplaysServed:     c.replaysServed.Load(),
		ReplaysWithheld:   c.replaysWithheld.Load(),
		BudgetRefusals:    c.budgetRefusals.Load(),
		RetryLaterWritten: c.retryLaterWritten.Load(),
		BadGatewayWritten: c.badGatewayWritten.Load(),
		AdaptiveTraces:    c.adaptiveTraces.Load(),
	}
	passed, refused := s.PassedThrough.fields(), s.ReplaysRefused.fields()
	for r := range PassThroughReasons() {
		*passed[r] = c.passed[r].Load()
	}
	for r := range RefusalReasons() {
		*refused[r] = c.refused[r].Load()
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
