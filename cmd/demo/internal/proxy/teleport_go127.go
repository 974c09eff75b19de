//go:build go1.27 && !http2legacy

package proxy

// configureBeforeDefaults is false on Go 1.27, where x/net's HTTP/2 wraps
// net/http's: there http2.ConfigureTransport registers net/http's HTTP/2 on
// the *http.Transport, and utilnet.SetTransportDefaults' own configuration
// registers it again, which panics ("http: HTTP/2 Transport already
// registered"; TestFactConfigureTwice). Teleport's agent's chain as it is
// would panic at its start; the chain here leaves out the first call, as the
// agent would have to: SetTransportDefaults turns HTTP/2 on by itself.
const configureBeforeDefaults = false
