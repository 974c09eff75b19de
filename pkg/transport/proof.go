package transport

import (
	"errors"
	"net/http"
	"reflect"
	"strings"

	"github.com/teebody/teebody/pkg/teebody"
)

// Proof that the upstream did not process a request.
//
// A resend, or a 429 that invites the client to send again, is safe only if
// the upstream did not process the request. Part of an error's text is the
// peer's: Go's HTTP/2 error for a stream the upstream may have processed
// quotes the GOAWAY's debug data, quic-go's errors quote the peer's reason
// phrase, and a wrapping RoundTripper may quote the upstream's message. So
// no text is searched for a substring. An error proves that the request was
// not processed only by its structure:
//   - the type and code of an error value (quic-go's, known by their shape,
//     since the library does not import quic-go);
//   - or the whole text of an error that Go builds from constants alone,
//     compared exactly, for the errors that Go's transports return as plain
//     strings.
//
// Each node of the error's tree (errors.Unwrap, both forms) is tested on
// its own, so wrappers such as *url.Error do not hide a proof. A node that
// wraps several errors proves only if each of them does (proves).

// net/http's errCannotRewind, built from constants: net/http wanted to
// rewind a body that has no GetBody. It rewinds a body to resend a request
// that nothing of was written, or that its HTTP/2 pool had no connection
// for, or an idempotent one (GET, HEAD, OPTIONS, TRACE, or an
// Idempotency-Key) after a reused HTTP/1 connection failed before the
// response's first byte. That last resend may follow a request the upstream
// processed, but net/http takes a request with a body for idempotent only
// if it has GetBody, so it never ends in this error (docs/design.md, facts
// 1, 5 and 6).
//
// The errors of a read of a closed inbound body are no proof:
// ReverseProxy's "ReverseProxy does an invalid Read on closed Body",
// http.ErrBodyReadAfterClose and the HTTP/2 server body's "body closed by
// handler". Without GetBody, Go's HTTP/2 transport resends the same body
// when its stream was never opened (errClientConnUnusable), and the first
// attempt has closed it. The resend writes the request's headers before it
// reads the body, so the upstream has the request when the read fails
// (TestFactClosedBodyResendReachesUpstream).
const (
	errTextCannotRewind = "net/http: cannot rewind body after connection loss"

	errTextClosedProxyBody    = "ReverseProxy does an invalid Read on closed Body"
	errTextClosedH2ServerBody = "body closed by handler" // net/http's errClosedBody, unexported
)

// Go's HTTP/2 error when a refused request cannot be sent again (net/http's
// bundle, net/http/internal/http2 in Go 1.27, golang.org/x/net/http2):
//
//	http2: Transport: cannot retry err [CAUSE] after Request.Body was
//	written; define Request.GetBody to avoid this error
//
// CAUSE is formatted with %v, so only the text is left of it. Go builds it
// for any error its canRetryError accepts. Only some of those are proof.
const (
	errTextCannotRetryPrefix = "http2: Transport: cannot retry err ["
	errTextCannotRetrySuffix = "] after Request.Body was written; define Request.GetBody to avoid this error"

	// A stream above a graceful GOAWAY's LastStreamID, which the server
	// did not process (RFC 9113, section 6.8).
	errTextH2GoAway = "http2: Transport received Server's graceful shutdown GOAWAY"
	// A stream that was never opened.
	errTextH2ConnUnusable = "http2: client conn not usable"
	// A stream the peer reset with REFUSED_STREAM, which means it did not
	// process the request (RFC 9113, section 8.7):
	// "stream error: stream ID N; REFUSED_STREAM; received from peer".
	// Go 1.26 also retries a peer's PROTOCOL_ERROR (golang.org/issue/47635),
	// which a server may send after processing the request: it is no proof.
	errTextStreamErrorPrefix = "stream error: stream ID "
	errTextRefusedByPeer     = "; REFUSED_STREAM; received from peer"
)

// apimachinery's proxy transport (UpgradeAwareHandler with wrapTransport
// true, as the kube-aggregator wires it) answers a transport's error with
// a Status error of its own text, "error trying to reach service: " and
// the error's text. errors.Is no longer works on it, and quic-go's errors
// lose their structure. Such a text is proof only if what follows the
// prefix is the whole text of one of Go's errors that proves by its text
// (errTextCannotRewind, cannotRetryUnprocessed), or one line that begins
// with teebody.ErrNotReplayable's text, which no error of an upstream
// begins with. quic-go's proofs are lost there: their texts are the same
// as those of errors that prove nothing, with the peer's reason phrase in
// them.
const errTextReachService = "error trying to reach service: "

// The packages of quic-go's error types, known by their shape
// (github.com/quic-go/quic-go, read in v0.65.0; interop/http3 tests them on
// quic-go itself). Variables, so that this package's tests can give them
// fakes of the same shape.
var (
	quicPackage  = "github.com/quic-go/quic-go"
	http3Package = "github.com/quic-go/quic-go/http3"
)

const (
	// H3_REQUEST_REJECTED: a stream reset with it means that the request
	// was not processed (RFC 9114, section 4.1.1).
	h3RequestRejected = 0x10b
	// errGoAway's text, the cause of an errConnUnusable for a connection
	// that received GOAWAY.
	errTextH3GoAway = "connection in graceful shutdown"
)

// ShouldRetryLater reports whether err proves that the upstream did not
// process the request, and that it could not be sent again. The client may
// then safely send it later. It holds for:
//   - an error matching teebody.ErrNotReplayable;
//   - the errors that Go's transports and quic-go's HTTP/3 transport return
//     for a request they refused to resend only because its body could not
//     be rewound;
//   - quic-go's errors for a request that was never sent, or that the
//     upstream rejected with H3_REQUEST_REJECTED;
//   - the text that apimachinery's UpgradeAwareHandler makes of such an
//     error, "error trying to reach service: " and its text, if that text
//     alone proves it: teebody's refusal and Go's errors, not quic-go's.
//
// An error that wraps several errors proves it only if each of them does.
// These are no proof: an HTTP/2 PROTOCOL_ERROR, a GOAWAY that may have come
// after the request was processed (whatever its debug data), and
// http.ErrBodyReadAfterClose.
//
// On Go 1.26 it may hold for a request the upstream processed: net/http's
// HTTP/2 transport also asks GetBody for a replay after a PROTOCOL_ERROR,
// and returns teebody's refusal alone. Go 1.27 no longer asks.
func ShouldRetryLater(err error) bool {
	return err != nil && proves(err, provesUnprocessed)
}

// provesUnprocessed reports whether e itself, not what it wraps, proves
// that the upstream did not process the request.
func provesUnprocessed(e error) bool {
	switch {
	case isNotReplayable(e), h3Rejected(e), h3ConnUnusable(e):
		return true
	}
	msg := e.Error()
	if rest, ok := strings.CutPrefix(msg, errTextReachService); ok {
		return provesByText(rest) || flattenedRefusal(rest)
	}
	return provesByText(msg)
}

// isNotReplayable reports whether e itself is teebody.ErrNotReplayable, or
// says it is with an Is method, as errors.Is asks each error of a tree.
func isNotReplayable(e error) bool {
	if e == teebody.ErrNotReplayable {
		return true
	}
	is, ok := e.(interface{ Is(error) bool })
	return ok && is.Is(teebody.ErrNotReplayable)
}

// provesByText reports whether msg is the whole text of one of Go's errors
// that proves, by its text alone, that the request was not processed.
func provesByText(msg string) bool {
	return msg == errTextCannotRewind || cannotRetryUnprocessed(msg)
}

// flattenedRefusal reports whether msg, what apimachinery kept of an error
// after its prefix, is the text of teebody's refusal: it begins with
// teebody.ErrNotReplayable's text and is one line. errors.Join puts each
// of its errors on a line of its own, and a join proves only if each of
// its errors does, which the text no longer tells. A prefix is enough: how
// the text begins is chosen by the outermost error, which is the round
// trip's own, never by an upstream, whose words (a GOAWAY's debug data, a
// reset's code) come after Go's own text.
func flattenedRefusal(msg string) bool {
	return strings.HasPrefix(msg, teebody.ErrNotReplayable.Error()) && !strings.Contains(msg, "\n")
}

// readClosedBody reports whether err is a failed read of a body that an
// earlier attempt closed. It is no proof, but it means that the request's
// connection went away, which adaptive mode takes for a trace of GOAWAY.
func readClosedBody(err error) bool {
	return errors.Is(err, http.ErrBodyReadAfterClose) || anyNode(err, func(e error) bool {
		msg := e.Error()
		return msg == errTextClosedProxyBody || msg == errTextClosedH2ServerBody
	})
}

// resendable reports whether send may send a request again that the inner
// RoundTripper failed with err: quic-go proved that the upstream did not
// process it, and gave up resending it. Go's HTTP/2 transport resends such
// a request itself.
func resendable(err error) bool {
	return proves(err, func(e error) bool {
		return h3Rejected(e) || h3ConnUnusable(e) && errors.Unwrap(e).Error() == errTextH3GoAway
	})
}

// cannotRetryUnprocessed reports whether msg is the whole text of Go's
// HTTP/2 error for a request it could not resend, with a cause that proves
// the stream was not processed.
func cannotRetryUnprocessed(msg string) bool {
	cause, ok := strings.CutPrefix(msg, errTextCannotRetryPrefix)
	if !ok {
		return false
	}
	if cause, ok = strings.CutSuffix(cause, errTextCannotRetrySuffix); !ok {
		return false
	}
	switch cause {
	case errTextH2GoAway, errTextH2ConnUnusable:
		return true
	}
	id, ok := strings.CutPrefix(cause, errTextStreamErrorPrefix)
	if !ok {
		return false
	}
	id, ok = strings.CutSuffix(id, errTextRefusedByPeer)
	return ok && isStreamID(id)
}

// isStreamID reports whether s is an HTTP/2 stream ID as Go formats it: a
// decimal number below 2³¹, without a sign or leading zeros.
func isStreamID(s string) bool {
	if s == "" || len(s) > len("2147483647") || s[0] == '0' && s != "0" {
		return false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n < 1<<31
}

// h3Rejected reports whether e is quic-go's *http3.Error for a stream the
// peer reset with H3_REQUEST_REJECTED: Remote, the code, and a
// *quic.StreamError beneath, not a connection's close.
func h3Rejected(e error) bool {
	v, ok := structOf(e, http3Package, "Error")
	if !ok || !isTrue(v, "Remote") {
		return false
	}
	if code, ok := field(v, "ErrorCode", reflect.Uint64); !ok || code.Uint() != h3RequestRejected {
		return false
	}
	s, ok := structOf(errors.Unwrap(e), quicPackage, "StreamError")
	return ok && isTrue(s, "Remote")
}

// h3ConnUnusable reports whether e is quic-go's *http3.errConnUnusable: no
// stream could be opened for the request, so none of it was sent.
func h3ConnUnusable(e error) bool {
	_, ok := structOf(e, http3Package, "errConnUnusable")
	return ok && errors.Unwrap(e) != nil
}

// structOf returns the struct that e points to, if e is a pointer to the
// struct type name of package pkg.
func structOf(e error, pkg, name string) (reflect.Value, bool) {
	v := reflect.ValueOf(e)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return reflect.Value{}, false
	}
	t := v.Type().Elem()
	if t.Kind() != reflect.Struct || t.Name() != name || t.PkgPath() != pkg {
		return reflect.Value{}, false
	}
	return v.Elem(), true
}

// field returns the field name of the struct v, if it has one of kind k.
func field(v reflect.Value, name string, k reflect.Kind) (reflect.Value, bool) {
	f := v.FieldByName(name)
	return f, f.IsValid() && f.Kind() == k
}

// isTrue reports whether the struct v has a bool field name that is true.
func isTrue(v reflect.Value, name string) bool {
	f, ok := field(v, name, reflect.Bool)
	return ok && f.Bool()
}

// proves reports whether f holds for err or for what it wraps. An error
// that wraps several (errors.Join, fmt.Errorf with several %w) proves only
// if each of them does: a RoundTripper that tries again joins the errors of
// its attempts, and one attempt that the upstream may have processed makes
// a resend unsafe.
func proves(err error, f func(error) bool) bool {
	for {
		if f(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			if err = u.Unwrap(); err == nil {
				return false
			}
		case interface{ Unwrap() []error }:
			errs := u.Unwrap()
			for _, e := range errs {
				if e == nil || !proves(e, f) {
					return false
				}
			}
			return len(errs) > 0
		default:
			return false
		}
	}
}

// anyNode reports whether f holds for err or for any error in its tree.
// It serves where no proof is needed (a trace of GOAWAY).
func anyNode(err error, f func(error) bool) bool {
	for err != nil {
		if f(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if anyNode(e, f) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}
