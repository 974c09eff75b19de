package transport

import (
	"errors"

	"github.com/teebody/teebody/pkg/teebody"
)

// PassThroughReason says why RoundTrip handed a request on untouched. An
// upgrade counts as PassThroughUpgrade, with a body or without. Any other
// request counts for the first reason that applies, in the order of the
// constants.
type PassThroughReason int

// The reasons a request passes through.
const (
	PassThroughNoBody     PassThroughReason = iota + 1 // Body nil or http.NoBody
	PassThroughGetBodySet                              // the caller set GetBody
	PassThroughUpgrade                                 // an Upgrade, Connection: Upgrade or X-Stream-Protocol-Version header
	PassThroughDisabled                                // the Config disables buffering
	PassThroughQuiet                                   // adaptive mode: a large body to a quiet upstream

	passThroughEnd // one past the last: a new reason goes above it, with its entry in passThroughs
)

// passThroughs is the one table of pass-through reasons, indexed by reason:
// its metric label and its field of PassThroughStats. PassThroughReasons,
// PassThroughStats.Count, the Transport's counters and Stats all read it.
var passThroughs = [passThroughEnd]struct {
	label string
	field func(*PassThroughStats) *int64
}{
	PassThroughNoBody:     {"no_body", func(s *PassThroughStats) *int64 { return &s.NoBody }},
	PassThroughGetBodySet: {"get_body_set", func(s *PassThroughStats) *int64 { return &s.GetBodySet }},
	PassThroughUpgrade:    {"upgrade", func(s *PassThroughStats) *int64 { return &s.Upgrade }},
	PassThroughDisabled:   {"disabled", func(s *PassThroughStats) *int64 { return &s.Disabled }},
	PassThroughQuiet:      {"quiet", func(s *PassThroughStats) *int64 { return &s.Quiet }},
}

func (r PassThroughReason) known() bool { return r > 0 && r < passThroughEnd }

// String returns the reason's metric label, such as "no_body", or
// "unknown" for a value that is no reason.
func (r PassThroughReason) String() string {
	if !r.known() {
		return "unknown"
	}
	return passThroughs[r].label
}

// PassThroughReasons returns every PassThroughReason, in the order of the
// constants, in a new slice.
func PassThroughReasons() []PassThroughReason {
	rs := make([]PassThroughReason, 0, passThroughEnd-1)
	for r := PassThroughReason(1); r < passThroughEnd; r++ {
		rs = append(rs, r)
	}
	return rs
}

// Count returns the requests that passed through for reason r, or 0 if r
// is no reason.
func (p PassThroughStats) Count(r PassThroughReason) int64 {
	if !r.known() {
		return 0
	}
	return *passThroughs[r].field(&p)
}

// refusals is the one table of the teebody.Reasons that RefusalStats counts,
// indexed by reason: each one's field. RefusalReasons, RefusalStats.Count,
// the Transport's counters and Stats all read it; a test checks that every
// teebody.Reason has its entry, so that none can be counted as another.
var refusals = [...]func(*RefusalStats) *int64{
	teebody.ReasonTooLarge:     func(s *RefusalStats) *int64 { return &s.TooLarge },
	teebody.ReasonNoBudget:     func(s *RefusalStats) *int64 { return &s.NoBudget },
	teebody.ReasonStreamedPast: func(s *RefusalStats) *int64 { return &s.StreamedPast },
	teebody.ReasonClosed:       func(s *RefusalStats) *int64 { return &s.Closed },
	teebody.ReasonYielded:      func(s *RefusalStats) *int64 { return &s.Yielded },
}

// counted reports whether RefusalStats has a field for r.
func counted(r teebody.Reason) bool {
	return r >= 0 && int(r) < len(refusals) && refusals[r] != nil
}

// RefusalReasons returns every teebody.Reason that RefusalStats counts, in
// the order of its fields, in a new slice.
func RefusalReasons() []teebody.Reason {
	var rs []teebody.Reason
	for r := range refusals {
		if counted(teebody.Reason(r)) {
			rs = append(rs, teebody.Reason(r))
		}
	}
	return rs
}

// Count returns the replays refused for reason r, or 0 if RefusalStats does
// not count r.
func (s RefusalStats) Count(r teebody.Reason) int64 {
	if !counted(r) {
		return 0
	}
	return *refusals[r](&s)
}

// countRefusal counts a GetBody call that err refused, under its reason.
// An error that is not a teebody.NotReplayableError is not counted: it does
// not match ErrNotReplayable, and ReplaysRefused counts only those.
func (t *Transport) countRefusal(err error) {
	if nre, ok := errors.AsType[teebody.NotReplayableError](err); ok && counted(nre.Reason()) {
		t.counters.refused[nre.Reason()].Add(1)
	}
}
