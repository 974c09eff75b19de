package transport

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// A gRPC client reads a failure from grpc-status, not from the HTTP status:
// it maps a 429 to UNAVAILABLE with the message "unexpected HTTP status code
// 429", and ignores Retry-After. So ErrorHandler and Responder answer a gRPC
// request as a gRPC server would: HTTP 200 and a trailers-only response,
// whose single HEADERS frame ends the stream and carries grpc-status and
// grpc-message. Go's HTTP/2 server sends it so when the handler returns
// having written no body. Both answers are UNAVAILABLE (14), which gRPC's
// own mapping of a 502 gives too, so that clients whose retry policy names
// UNAVAILABLE retry them. A retry later also carries
// grpc-retry-pushback-ms, the delay that a client's retry policy waits
// before its next attempt.

// grpcUnavailable is the grpc-status code UNAVAILABLE.
const grpcUnavailable = "14"

// The grpc-message of each answer: plain words, with no error text.
const (
	grpcMsgRetryLater = "the request body could not be replayed after the upstream closed its connection; try again later"
	grpcMsgBadGateway = "the proxy got no response from the upstream"
)

// grpcContentType returns the Content-Type of r if r is a gRPC request
// ("application/grpc", or that followed by '+' or ';' and more), else "".
func grpcContentType(r *http.Request) string {
	if r == nil {
		return ""
	}
	ct := r.Header.Get("Content-Type")
	if ct == "application/grpc" || strings.HasPrefix(ct, "application/grpc+") || strings.HasPrefix(ct, "application/grpc;") {
		return ct
	}
	return ""
}

// writeGRPC answers a gRPC request whose Content-Type is contentType with a
// trailers-only UNAVAILABLE of the given message, and a retry pushback of
// pushback rounded up to whole milliseconds if pushback > 0.
func writeGRPC(w http.ResponseWriter, contentType, message string, pushback time.Duration) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Grpc-Status", grpcUnavailable)
	h.Set("Grpc-Message", grpcPercentEncode(message))
	if pushback > 0 {
		ms := (pushback + time.Millisecond - 1) / time.Millisecond
		h.Set("Grpc-Retry-Pushback-Ms", strconv.FormatInt(int64(ms), 10))
	}
	w.WriteHeader(http.StatusOK)
}

// grpcPercentEncode encodes s as gRPC's wire spec requires of grpc-message:
// every byte outside the printable ASCII range 0x20-0x7E, and '%' itself,
// becomes '%' and two upper-case hex digits.
func grpcPercentEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		if c >= ' ' && c <= '~' && c != '%' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	return b.String()
}
