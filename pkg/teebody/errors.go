package teebody

import "errors"

// ErrNotReplayable is the errors.Is target for every refused replay: a
// NewReader call that cannot give the body again from its first byte, and a
// follower's Read whose bytes were dropped before it could read them. The
// error actually returned is a *NotReplayableError, which says why.
var ErrNotReplayable = errors.New("teebody: body is not replayable")

// ErrClosed is returned by a follower's Read after that follower was closed
// or after the Tee was closed (the request is over).
var ErrClosed = errors.New("teebody: read on closed body")

// errTeeClosedTwice is returned by the second and later calls of Tee.Close.
var errTeeClosedTwice = errors.New("teebody: Tee closed more than once")

// Reason says why a body cannot be replayed.
type Reason int

// The reasons a replay is refused.
const (
	// ReasonTooLarge: the body grew past the per-request limit, so its start
	// was not kept.
	ReasonTooLarge Reason = iota + 1
	// ReasonNoBudget: the shared Budget could not hold the body.
	ReasonNoBudget
	// ReasonStreamedPast: a response arrived (Seal), so no replay can happen
	// any more and the bytes a replay needs are being dropped.
	ReasonStreamedPast
	// ReasonClosed: the Tee was closed; the request is over.
	ReasonClosed
	// ReasonYielded: the shared Budget took back what the body held, for a
	// body that held less (see Budget).
	ReasonYielded
)

// String returns a short lower-case name of the reason, suitable as a metric
// label.
func (r Reason) String() string {
	switch r {
	case ReasonTooLarge:
		return "too_large"
	case ReasonNoBudget:
		return "no_budget"
	case ReasonStreamedPast:
		return "streamed_past"
	case ReasonClosed:
		return "closed"
	case ReasonYielded:
		return "yielded"
	}
	return "unknown"
}

// NotReplayableError reports that a body cannot be given again from its first
// byte, and why. errors.Is(err, ErrNotReplayable) holds for every
// NotReplayableError; use errors.As to read the Reason.
type NotReplayableError struct {
	Reason Reason
}

// Error returns the reason in words.
func (e *NotReplayableError) Error() string {
	switch e.Reason {
	case ReasonTooLarge:
		return "teebody: body is not replayable: larger than the per-request limit"
	case ReasonNoBudget:
		return "teebody: body is not replayable: the shared budget is spent"
	case ReasonStreamedPast:
		return "teebody: body is not replayable: already streamed past its start"
	case ReasonClosed:
		return "teebody: body is not replayable: the request is over"
	case ReasonYielded:
		return "teebody: body is not replayable: its budget went to a smaller body"
	}
	return "teebody: body is not replayable"
}

// Is reports whether target is ErrNotReplayable.
func (e *NotReplayableError) Is(target error) bool {
	return target == ErrNotReplayable
}

// The errors handed out, made once so that refusing a replay allocates
// nothing. Callers must not modify them.
var (
	errTooLarge     = &NotReplayableError{Reason: ReasonTooLarge}
	errNoBudget     = &NotReplayableError{Reason: ReasonNoBudget}
	errStreamedPast = &NotReplayableError{Reason: ReasonStreamedPast}
	errOver         = &NotReplayableError{Reason: ReasonClosed}
	errYielded      = &NotReplayableError{Reason: ReasonYielded}
)

// errInvalidRead is the source's terminal error when its Read returned a
// count out of range, as bufio reports it.
var errInvalidRead = errors.New("teebody: source returned an invalid count from Read")
