package transport

import (
	"iter"

	"github.com/teebody/teebody/pkg/teebody"
)

// PassThroughReason says why RoundTrip handed a request on untouched. An
// upgrade counts as PassThroughUpgrade, with a body or without. Any other
// request counts for the first reason that applies, in the order of the
// constants. The zero value is no reason: in a Report, the body was buffered.
type PassThroughReason int

// The reasons a request passes through.
const (
	PassThroughNoBody     PassThroughReason = iota + 1 // Body nil or http.NoBody
	PassThroughGetBodySet                              // the caller set GetBody
	PassThroughUpgrade                                 // an Upgrade, Connection: Upgrade or X-Stream-Protocol-Version header
	PassThroughDisabled                                // the Config disables buffering
	PassThroughQuiet                                   // adaptive mode: a large body to a quiet upstream

	passThroughEnd // one past the last: a new reason goes above it, with its label and its field
)

// passThroughLabels holds each reason's metric label, indexed by reason.
var passThroughLabels = [passThroughEnd]string{"none", "no_body", "get_body_set", "upgrade", "disabled", "quiet"}

// String returns the reason's metric label, such as "no_body". The zero
// value is "none"; a value that is no reason is "unknown".
func (r PassThroughReason) String() string {
	if r < 0 || r >= passThroughEnd {
		return "unknown"
	}
	return passThroughLabels[r]
}

// PassThroughReasons returns an iterator over every PassThroughReason, in
// the order of the constants.
func PassThroughReasons() iter.Seq[PassThroughReason] {
	return func(yield func(PassThroughReason) bool) {
		for r := PassThroughNoBody; r < passThroughEnd && yield(r); r++ {
		}
	}
}

const refusalEnd = teebody.ReasonYielded + 1 // one past the last teebody.Reason (TestEveryReasonCounted)

// RefusalReasons returns an iterator over every teebody.Reason that
// RefusalStats counts, in the order of its fields.
func RefusalReasons() iter.Seq[teebody.Reason] {
	return func(yield func(teebody.Reason) bool) {
		for r := teebody.ReasonTooLarge; r < refusalEnd && yield(r); r++ {
		}
	}
}
