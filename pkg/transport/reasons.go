package transport

import "github.com/teebody/teebody/pkg/teebody"

// PassThroughReason says why RoundTrip handed a request to the inner
// RoundTripper untouched: the first of these, in this order, that applied.
type PassThroughReason int

// The reasons a request passes through, one per field of PassThroughStats.
const (
	PassThroughNoBody     PassThroughReason = iota + 1 // Body nil or http.NoBody
	PassThroughGetBodySet                              // the caller set GetBody
	PassThroughUpgrade                                 // the request asks for a protocol upgrade
	PassThroughDisabled                                // the Config disables buffering
	PassThroughQuiet                                   // adaptive mode: the upstream left no trace of GOAWAY
)

// String returns a short lower-case name of the reason, suitable as a metric
// label: "no_body", "get_body_set", "upgrade", "disabled", "quiet".
func (r PassThroughReason) String() string {
	switch r {
	case PassThroughNoBody:
		return "no_body"
	case PassThroughGetBodySet:
		return "get_body_set"
	case PassThroughUpgrade:
		return "upgrade"
	case PassThroughDisabled:
		return "disabled"
	case PassThroughQuiet:
		return "quiet"
	}
	return "unknown"
}

// PassThroughReasons returns every PassThroughReason, in the order RoundTrip
// checks them: one per field of PassThroughStats. The slice is new on each
// call.
func PassThroughReasons() []PassThroughReason {
	return []PassThroughReason{PassThroughNoBody, PassThroughGetBodySet, PassThroughUpgrade, PassThroughDisabled, PassThroughQuiet}
}

// Count returns the requests that passed through for reason r; 0 for a
// reason not listed by PassThroughReasons.
func (p PassThroughStats) Count(r PassThroughReason) int64 {
	switch r {
	case PassThroughNoBody:
		return p.NoBody
	case PassThroughGetBodySet:
		return p.GetBodySet
	case PassThroughUpgrade:
		return p.Upgrade
	case PassThroughDisabled:
		return p.Disabled
	case PassThroughQuiet:
		return p.Quiet
	}
	return 0
}

// RefusalReasons returns every teebody.Reason that RefusalStats counts, one
// per field, in the order of its fields. The slice is new on each call.
func RefusalReasons() []teebody.Reason {
	return []teebody.Reason{teebody.ReasonTooLarge, teebody.ReasonNoBudget, teebody.ReasonStreamedPast,
		teebody.ReasonClosed, teebody.ReasonYielded}
}

// Count returns the replays refused for reason r; 0 for a reason not listed
// by RefusalReasons.
func (s RefusalStats) Count(r teebody.Reason) int64 {
	switch r {
	case teebody.ReasonTooLarge:
		return s.TooLarge
	case teebody.ReasonNoBudget:
		return s.NoBudget
	case teebody.ReasonStreamedPast:
		return s.StreamedPast
	case teebody.ReasonClosed:
		return s.Closed
	case teebody.ReasonYielded:
		return s.Yielded
	}
	return 0
}
