//go:build go1.27

package transport_test

// Go 1.27's HTTP/2 transport in net/http no longer sends a request again
// after the peer reset its stream with PROTOCOL_ERROR: its canRetryError
// accepts only REFUSED_STREAM and a graceful GOAWAY.
const goResendsProtocolError = false
