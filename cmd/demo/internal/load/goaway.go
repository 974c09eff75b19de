package load

import "strings"

// IsGoaway reports whether err is the failure this demo is about: a request
// refused by a graceful GOAWAY that the client could not retry, because it
// could not produce the body again. Go's HTTP/2 transport returns it as a
// plain string error ("http2: Transport: cannot retry err [http2: Transport
// received Server's graceful shutdown GOAWAY] after Request.Body was
// written; define Request.GetBody to avoid this error"), which nothing can
// match with errors.Is, so the text is matched; through a proxy it arrives
// as the text of a 502's Status message.
func IsGoaway(err error) bool {
	return err != nil && strings.Contains(err.Error(), "GOAWAY")
}
