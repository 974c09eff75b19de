//go:build !go1.27 || http2legacy

package proxy

// configureBeforeDefaults: x/net's http2.ConfigureTransport goes on the
// *http.Transport before utilnet.SetTransportDefaults, as in Teleport's
// agent. (With x/net's own HTTP/2, the second configuration fails with an
// error, which SetTransportDefaults logs.)
const configureBeforeDefaults = true
