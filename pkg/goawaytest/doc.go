// Package goawaytest provides an HTTP/2 server for tests that need
// graceful GOAWAY frames, in the manner of net/http/httptest.
//
// A Server serves an http.Handler on a loopback address. NewTLSServer
// serves HTTP/2 over TLS, and NewServer plain-text HTTP/2 with prior
// knowledge. The Server sends the GOAWAY frames that its options ask for:
//
//   - Refuse refuses the requests that a function picks. Once such a
//     request's body has started to arrive, the server sends a graceful
//     GOAWAY whose last stream ID is below the request's stream. So the
//     request was not processed (RFC 9113, section 6.8), and its handler
//     never runs. This happens every time, not by chance. A client that
//     can send the body again (http.Request.GetBody) retries on a new
//     connection. One that cannot, such as a reverse proxy forwarding the
//     body it reads, fails with Go's "cannot retry ... after Request.Body
//     was written".
//   - RefuseAfter refuses them in the same way, once more than n bytes of
//     their body have arrived, or all of it. A test can then let a client
//     send past its flow-control window, or past what a proxy buffers,
//     before the refusal.
//   - EndAfter ends each connection after its n-th request, as nginx's
//     keepalive_requests and many load balancers do.
//   - EndChance ends a request's connection with a probability, as
//     kube-apiserver's --goaway-chance does.
//
// With EndAfter and EndChance, the request is served, and the streams that
// the client opened on the connection after it are refused.
//
// A Server counts the requests its handler ran and the streams that a
// GOAWAY refused (Server.Stats, Server.Ran). A test can then assert that
// no request ran twice.
//
// A Server speaks HTTP/2 alone. Each client connection goes through a
// relay that reads its frames. An http.Server (Server.Config) serves it
// over an in-memory connection. The handler sees the client's address in
// Request.RemoteAddr and, over TLS, the connection's state in Request.TLS.
package goawaytest
