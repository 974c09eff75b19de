package transport_test

import (
	"errors"
	"fmt"
)

// Fakes of quic-go's error types (v0.65.0), with their names, fields and
// texts, which the library knows by their shape. quicshape_export_test.go
// points the library at this package for them.

// StreamError has the shape of quic-go's *quic.StreamError: a stream reset.
type StreamError struct {
	StreamID  int64
	ErrorCode uint64
	Remote    bool
}

func (e *StreamError) Error() string {
	by := "local"
	if e.Remote {
		by = "remote"
	}
	return fmt.Sprintf("stream %d canceled by %s with error code %d", e.StreamID, by, e.ErrorCode)
}

// ApplicationError has the shape of quic-go's *quic.ApplicationError: a
// connection's close, with the peer's reason phrase.
type ApplicationError struct {
	Remote       bool
	ErrorCode    uint64
	ErrorMessage string
}

func (e *ApplicationError) Error() string {
	return fmt.Sprintf("Application error %#x (remote): %s", e.ErrorCode, e.ErrorMessage)
}

// Error has the shape of quic-go's *http3.Error, which wraps either of the
// two above.
type Error struct {
	Remote       bool
	ErrorCode    uint64
	ErrorMessage string

	err error
}

// HTTP/3 error codes (RFC 9114, section 8.1).
const (
	h3NoError         = 0x100
	h3RequestRejected = 0x10b
)

func (e *Error) Error() string {
	s := fmt.Sprintf("H3 error (%#x)", e.ErrorCode)
	switch e.ErrorCode {
	case h3NoError:
		s = "H3_NO_ERROR"
	case h3RequestRejected:
		s = "H3_REQUEST_REJECTED"
	}
	if !e.Remote {
		s += " (local)"
	}
	if e.ErrorMessage != "" {
		s += ": " + e.ErrorMessage
	}
	return s
}

func (e *Error) Unwrap() error { return e.err }

// errConnUnusable has the shape of quic-go's *http3.errConnUnusable: no
// stream could be opened.
type errConnUnusable struct{ e error }

func (e *errConnUnusable) Unwrap() error { return e.e }
func (e *errConnUnusable) Error() string { return "http3: conn unusable: " + e.e.Error() }

// h3StreamReset is quic-go's error for a request stream the peer reset
// with code, as http3's RoundTrip returns it.
func h3StreamReset(code uint64) error {
	err := &Error{Remote: true, ErrorCode: code, err: &StreamError{StreamID: 4, ErrorCode: code, Remote: true}}
	return fmt.Errorf("http3: parsing frame failed: %w", err)
}

// h3ConnClosed is quic-go's error for a request whose connection the peer
// closed with code and reason.
func h3ConnClosed(code uint64, reason string) error {
	app := &ApplicationError{Remote: true, ErrorCode: code, ErrorMessage: reason}
	return fmt.Errorf("http3: parsing frame failed: %w", &Error{Remote: true, ErrorCode: code, ErrorMessage: reason, err: app})
}

// h3GoAway is quic-go's error for a request it could not open a stream for,
// since the connection had received GOAWAY.
var h3GoAway = &errConnUnusable{e: errors.New("connection in graceful shutdown")}

// h3CannotRetry is quic-go's error for a rejected request without GetBody.
func h3CannotRetry(err error) error {
	return fmt.Errorf("http3: Transport: cannot retry err [%w] after Request.Body was written; define Request.GetBody to avoid this error", err)
}
