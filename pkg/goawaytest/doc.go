// Package goawaytest provides an HTTP/2 server for tests that need
// graceful GOAWAY frames, in the manner of net/http/httptest.
//
// A Server serves an http.Handler on a loopback address, over TLS
// (NewTLSServer) or as plain-text HTTP/2 with prior knowledge (NewServer),
// and sends the GOAWAY frames that its options ask for:
//
//   - Refuse refuses the requests that a function picks: once such a
//     request's body has started to arrive (at once for a request without
//     a body), the server sends a graceful GOAWAY whose last stream ID is
//     below the request's stream, so the request was not processed (RFC
//     9113, section 6.8) and its handler never runs. This happens every
//     time, not by chance: a client that can send the body again
//     (http.Request.GetBody) retries on a new connection; one that cannot,
//     such as a reverse proxy forwarding the body it reads, fails with Go's
//     "cannot retry ... after Request.Body was written".
//   - EndAfter ends each connection after its n-th request, as nginx's
//     keepalive_requests and many load balancers do, and EndChance ends a
//     request's connection with a probability, as kube-apiserver's
//     --goaway-chance does: the request is served, and the streams that the
//     client opened on the connection after it are refused.
//
// A Server counts the requests its handler ran and the streams that a
// GOAWAY refused (Server.Stats, Server.Ran), so that a test can assert that
// no request ran twice.
//
// A Server speaks HTTP/2 alone. Each client connection goes through a
// relay that reads its frames, and is served by an http.Server
// (Server.Config) over an in-memory connection: the handler sees the
// client's address in Request.RemoteAddr and, over TLS, the connection's
// state in Request.TLS.
package goawaytest
