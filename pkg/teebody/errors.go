package teebody

import "errors"

// ErrNotReplayable matches every refused replay with errors.Is. NewReader
// refuses a replay when it cannot give the body again from its first byte.
// A follower's Read refuses one when the bytes it needs were dropped. The
// error returned is a NotReplayableError, which says why.
var ErrNotReplayable = errors.New("teebody: body is not replayable")

// ErrClosed is returned by a follower's Read once that follower or its Tee
// is closed.
var ErrClosed = errors.New("teebody: read on closed body")

// errTeeClosedTwice is returned by the second and later calls of Tee.Close.
var errTeeClosedTwice = errors.New("teebody: Tee closed more than once")

// Reason says why a body cannot be replayed.
type Reason int

// The reasons a replay is refused.
const (
	// ReasonTooLarge: the body grew past its limit, so its start was not
	// kept.
	ReasonTooLarge Reason = iota + 1
	// ReasonNoBudget: the shared Budget could not hold the body.
	ReasonNoBudget
	// ReasonStreamedPast: a response arrived (Seal), so no replay can
	// happen. The bytes a replay needs are being dropped.
	ReasonStreamedPast
	// ReasonClosed: the Tee was closed, so the request is over.
	ReasonClosed
	// ReasonYielded: the shared Budget took back what the body's newest
	// follower had read. It went to a body that will then hold less (see
	// Budget).
	ReasonYielded

	// reasonEnd is one past the last reason: a new reason goes above it, and
	// the tests of every table indexed by Reason (here and in the packages
	// that count refusals) then fail until it has its entry.
	reasonEnd
)

// reasonWords names each reason: its String (a metric label) and the words
// of its NotReplayableError. The one table of reasons in this package.
var reasonWords = [reasonEnd]struct{ label, text string }{
	ReasonTooLarge:     {"too_large", "larger than the per-request limit"},
	ReasonNoBudget:     {"no_budget", "the shared budget is spent"},
	ReasonStreamedPast: {"streamed_past", "already streamed past its start"},
	ReasonClosed:       {"closed", "the request is over"},
	ReasonYielded:      {"yielded", "its budget went to a smaller body"},
}

// known reports whether r is one of the reasons above.
func (r Reason) known() bool { return r > 0 && r < reasonEnd }

// String returns a short lower-case name of the reason, suitable as a metric
// label. The names are "too_large", "no_budget", "streamed_past", "closed"
// and "yielded". The zero value, no reason, is "none"; any other value is
// "unknown".
func (r Reason) String() string {
	if r == 0 {
		return "none"
	}
	if !r.known() {
		return "unknown"
	}
	return reasonWords[r].label
}

// NotReplayableError reports that a body cannot be given again from its first
// byte, and why. errors.Is(err, ErrNotReplayable) holds for every
// NotReplayableError. errors.As reads it out of a wrapped error:
//
//	var nre teebody.NotReplayableError
//	if errors.As(err, &nre) {
//		log.Print(nre.Reason())
//	}
//
// It is a value, compared by its reason, so no holder of one can change what
// another sees. The zero value has no reason: its Reason is 0, "none".
type NotReplayableError struct {
	reason Reason
}

// notReplayable returns the NotReplayableError for reason r, as an error. It
// allocates nothing.
func notReplayable(r Reason) error {
	return NotReplayableError{reason: r}
}

// Reason returns why the body cannot be replayed.
func (e NotReplayableError) Reason() Reason { return e.reason }

// Error returns the reason in words.
func (e NotReplayableError) Error() string {
	if !e.reason.known() {
		return "teebody: body is not replayable"
	}
	return "teebody: body is not replayable: " + reasonWords[e.reason].text
}

// Is reports whether target is ErrNotReplayable.
func (e NotReplayableError) Is(target error) bool {
	return target == ErrNotReplayable
}

// The errors handed out, boxed once so that refusing a replay allocates
// nothing.
var (
	errTooLarge     = notReplayable(ReasonTooLarge)
	errNoBudget     = notReplayable(ReasonNoBudget)
	errStreamedPast = notReplayable(ReasonStreamedPast)
	errOver         = notReplayable(ReasonClosed)
	errYielded      = notReplayable(ReasonYielded)
)

// errInvalidRead is the source's terminal error when its Read returned a
// count out of range, as bufio reports it.
var errInvalidRead = errors.New("teebody: source returned an invalid count from Read")
