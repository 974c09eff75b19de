//go:build !go1.27

package transport_test

// Go 1.26's HTTP/2 transport in net/http sends a request again, through
// GetBody, after the peer reset its stream with PROTOCOL_ERROR
// (canRetryError, golang.org/issue/47635).
const goResendsProtocolError = true
