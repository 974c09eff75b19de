package load

import "github.com/teebody/teebody/pkg/transport"

// IsGoaway reports whether err is the failure this demo is about: a request
// that the upstream never processed and that the client could not send
// again because it could not replay the body. It is what
// transport.ShouldRetryLater recognises; through a proxy the error arrives
// as the message of a 502's Status, which keeps the text it matches. In the
// embedded run only GOAWAYs close connections, so every such error means a
// GOAWAY; against a real cluster a connection lost otherwise (a load
// balancer's reset) gives it as well.
func IsGoaway(err error) bool { return transport.ShouldRetryLater(err) }
