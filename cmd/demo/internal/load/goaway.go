package load

import "strings"

// IsGoaway reports whether err is the failure this demo is about: a request
// that the upstream never processed, refused because the upstream closed
// the connection (a graceful GOAWAY), that the client could not send again
// because it could not produce the body again. Go's transports return it
// as a plain string error, which nothing can match with errors.Is, so the
// text is matched (through a proxy, it arrives as the message of a 502's
// Status). It has three forms (DESIGN.md section 2, facts 1, 2, 5 and 6):
//
//   - "http2: Transport: cannot retry err [http2: Transport received
//     Server's graceful shutdown GOAWAY] after Request.Body was written;
//     define Request.GetBody to avoid this error", from the HTTP/2
//     transport;
//   - "net/http: cannot rewind body after connection loss", from net/http,
//     when the HTTP/2 pool had already dropped the connection that the
//     GOAWAY closed and net/http meant to send the request again;
//   - "ReverseProxy does an invalid Read on closed Body", through
//     httputil.ReverseProxy, when the HTTP/2 transport sends a request
//     again on a new connection (a connection that the GOAWAY made
//     unusable) with the body that its first attempt had closed.
//
// In the embedded run, where only GOAWAYs close connections, all three
// mean a GOAWAY; against a real cluster a connection lost otherwise (a load
// balancer's reset) gives the last two as well.
func IsGoaway(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "GOAWAY") ||
		strings.Contains(msg, "cannot rewind body after connection loss") ||
		strings.Contains(msg, "ReverseProxy does an invalid Read on closed Body")
}
