package load

import (
	"strings"

	"github.com/teebody/teebody/pkg/transport"
)

// goawayTexts are the texts of the failure the demo shows, as Go's
// transports and ReverseProxy write them.
var goawayTexts = []string{
	"define Request.GetBody to avoid this error",
	"cannot rewind body after connection loss",
	"ReverseProxy does an invalid Read on closed Body",
}

// isGoawayFailure reports whether err is a GOAWAY failure, for counting
// only. Through a proxy without the fix, the client gets the transport's
// error as text, in the message of the proxy's 502 Status: its structure is
// lost, so transport.ShouldRetryLater cannot judge it, and a substring
// search is good enough to count it. Nothing is sent again on it.
func isGoawayFailure(err error) bool {
	if transport.ShouldRetryLater(err) {
		return true
	}
	msg := err.Error()
	for _, text := range goawayTexts {
		if strings.Contains(msg, text) {
			return true
		}
	}
	return false
}
