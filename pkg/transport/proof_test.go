package transport_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// cannotRetry is Go's HTTP/2 error for a request it could not resend,
// with cause formatted in, as Go does with %v.
func cannotRetry(cause string) error {
	return errors.New("http2: Transport: cannot retry err [" + cause +
		"] after Request.Body was written; define Request.GetBody to avoid this error")
}

// goAwayAfterProcessing is Go's HTTP/2 error for a stream that a GOAWAY
// covered, which the upstream may have processed, with the peer's debug
// data quoted.
func goAwayAfterProcessing(debug string) error {
	return errors.New("http2: server sent GOAWAY and closed the connection; LastStreamID=1, ErrCode=NO_ERROR, debug=" +
		strconv.Quote(debug))
}

// unproven returns errors that prove nothing, whatever text they carry:
// each place where a peer or a wrapper can put a text.
func unproven() []error {
	errs := []error{
		cannotRetry("stream error: stream ID 1; PROTOCOL_ERROR; received from peer"),
		cannotRetry("stream error: stream ID 1; INTERNAL_ERROR; received from peer"),
		cannotRetry("stream error: stream ID 1; REFUSED_STREAM"), // not the peer's
		cannotRetry("stream error: stream ID 01; REFUSED_STREAM; received from peer"),
		cannotRetry("stream error: stream ID 1x; REFUSED_STREAM; received from peer"),
		cannotRetry("stream error: stream ID 2147483648; REFUSED_STREAM; received from peer"),
		cannotRetry("stream error: stream ID ; REFUSED_STREAM; received from peer"),
		cannotRetry("http2: Transport received Server's graceful shutdown GOAWAY; debug=x"),
		errors.New("x" + cannotRetry("http2: Transport received Server's graceful shutdown GOAWAY").Error()),
		errors.New(cannotRetry("http2: Transport received Server's graceful shutdown GOAWAY").Error() + "x"),
		errors.New("stream error: stream ID 1; REFUSED_STREAM; received from peer"), // Go resent it itself
		// A read of a body that an earlier attempt closed, by a resend that
		// had sent the headers.
		errors.New("ReverseProxy does an invalid Read on closed Body"),
		errors.New("body closed by handler"),
		http.ErrBodyReadAfterClose,
		h3StreamReset(h3NoError),
		&Error{Remote: false, ErrorCode: h3RequestRejected, err: &StreamError{ErrorCode: h3RequestRejected}}, // our own reset
		&Error{Remote: true, ErrorCode: h3RequestRejected, err: &StreamError{ErrorCode: h3RequestRejected}},  // a local stream error beneath
		h3ConnClosed(h3RequestRejected, ""), // a connection's close: RFC 9114 gives the code a meaning only on a stream
	}
	errs = append(errs, joinedUnproven()...)
	errs = append(errs, flattenedUnproven()...)
	for _, text := range provingTexts {
		errs = append(errs,
			goAwayAfterProcessing(text),
			h3ConnClosed(h3NoError, text),
			&Error{Remote: false, ErrorCode: h3NoError, ErrorMessage: text},
			&quotedError{"mesh: the upstream failed: " + text},
			fmt.Errorf("upstream said %q: %w", text, goAwayAfterProcessing(text)),
		)
	}
	return errs
}

// proofs returns one error of each kind that proves that the upstream did
// not process the request and that it was not sent again.
func proofs() []error {
	return []error{
		cannotRetry("http2: Transport received Server's graceful shutdown GOAWAY"),
		cannotRetry("http2: client conn not usable"),
		cannotRetry("stream error: stream ID 1; REFUSED_STREAM; received from peer"),
		cannotRetry("stream error: stream ID 2147483647; REFUSED_STREAM; received from peer"),
		errors.New("net/http: cannot rewind body after connection loss"),
		h3StreamReset(h3RequestRejected),
		h3GoAway,
		&errConnUnusable{e: h3ConnClosed(h3NoError, "bye")},
		h3CannotRetry(h3StreamReset(h3RequestRejected)),
	}
}

// proven returns errors that prove that the upstream did not process the
// request and that it was not sent again.
func proven() []error {
	var errs []error
	for _, err := range proofs() {
		errs = append(errs, err,
			&url.Error{Op: "Post", URL: "https://x", Err: err},
			fmt.Errorf("proxy: %w", err),
			// Several attempts, none of them processed.
			errors.Join(err, err),
			fmt.Errorf("%w, then %w", err, h3StreamReset(h3RequestRejected)))
	}
	return append(errs, flattenedProven()...)
}

// errProcessed is an error of an attempt that the upstream may have
// processed.
var errProcessed = errors.New("net/http: timeout awaiting response headers")

// joinedUnproven returns errors that wrap a proof and an error that proves
// nothing, as a RoundTripper that tries again returns the errors of its
// attempts: one attempt may have been processed.
func joinedUnproven() []error {
	var errs []error
	for _, err := range append(proofs(), teebody.ErrNotReplayable) {
		errs = append(errs,
			errors.Join(errProcessed, err),
			errors.Join(err, errProcessed),
			&url.Error{Op: "Post", URL: "https://x", Err: errors.Join(err, errProcessed)},
			fmt.Errorf("%w: %w", err, errProcessed),
			fmt.Errorf("%w, then %w", errProcessed, err),
			&multiError{err, nil},
		)
	}
	return append(errs, &multiError{})
}

// multiError wraps several errors, as errors.Join does, but keeps what
// errors.Join drops: nil, and none at all.
type multiError []error

func (m *multiError) Error() string   { return fmt.Sprint([]error(*m)) }
func (m *multiError) Unwrap() []error { return *m }

// reachService is what apimachinery's UpgradeAwareHandler, with
// wrapTransport, keeps of err: a text with a prefix of its own.
func reachService(err error) error {
	return errors.New("error trying to reach service: " + err.Error())
}

// flattenedProven returns the texts that apimachinery makes of errors that
// prove by their whole text: teebody's refusal and Go's constant texts.
func flattenedProven() []error {
	errs := []error{
		reachService(teebody.ErrNotReplayable),
		reachService(fmt.Errorf("%w (the upstream did not process the request: %w)", teebody.ErrNotReplayable, h3GoAway)),
	}
	for _, err := range proofs()[:5] { // Go's, which prove by their whole text
		errs = append(errs, reachService(err))
	}
	return errs
}

// flattenedUnproven returns the texts that apimachinery makes of errors
// that prove nothing, or whose proof was in their structure alone.
func flattenedUnproven() []error {
	errs := []error{
		reachService(h3StreamReset(h3RequestRejected)), // its text is that of a connection's close with the code
		reachService(h3GoAway),                         // its text may be the peer's reason phrase
		reachService(h3CannotRetry(h3StreamReset(h3RequestRejected))),
		reachService(cannotRetry("stream error: stream ID 1; PROTOCOL_ERROR; received from peer")),
		reachService(errors.Join(teebody.ErrNotReplayable, errProcessed)),
		reachService(errors.Join(proofs()[0], errProcessed)),
		errors.New("error trying to reach service: x" + proofs()[0].Error()),
		errors.New("error trying to reach service: " + proofs()[0].Error() + "x"),
		errors.New("error trying to reach service:" + proofs()[0].Error()),
		errors.New("x" + reachService(proofs()[0]).Error()),
		errors.New("x" + reachService(teebody.ErrNotReplayable).Error()),
	}
	return errs
}

// TestShouldRetryLaterOnProofAlone: ShouldRetryLater holds for the errors
// whose structure proves that the upstream did not process the request,
// behind any wrapper that keeps them, and for no error whose proof would
// rest on a text that a peer or a wrapper chose.
func TestShouldRetryLaterOnProofAlone(t *testing.T) {
	for _, err := range proven() {
		if !transport.ShouldRetryLater(err) {
			t.Errorf("ShouldRetryLater(%v) = false, want true", err)
		}
	}
	for _, err := range unproven() {
		if transport.ShouldRetryLater(err) {
			t.Errorf("ShouldRetryLater(%v) = true, want false", err)
		}
	}
}

// TestResendOnProofAlone: the Transport sends a request again only after an
// error of quic-go's that proves the upstream did not process it, never
// after one that only carries such a text.
func TestResendOnProofAlone(t *testing.T) {
	for _, err := range unproven() {
		synctest.Test(t, func(t *testing.T) {
			inner := &attempts{fails: []error{err}}
			tr := transport.New(inner, transport.DefaultConfig())
			_, rerr := tr.RoundTrip(post(t.Context(), []byte("write")))
			if n := inner.count(); n != 1 || rerr != err {
				t.Errorf("after %v: %d attempts, error %v; want one attempt and that error", err, n, rerr)
			}
		})
	}
}
