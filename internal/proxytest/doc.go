// Package proxytest holds the test servers and proxies that the module's
// tests and benchmarks share: a TLS HTTP/2 server on loopback that ends a
// fraction of its connections with a graceful GOAWAY, as a Kubernetes API
// server started with --goaway-chance does, or that refuses every stream of
// chosen connections so that a replay is needed every time; ServeFrames,
// which speaks raw HTTP/2 for a server that answers frame by frame; a
// hand-written forwarding proxy; a Dropper, an HTTP/1 server whose reused
// connections fail after it processed a request; Each, the worker pool that
// sends a list of requests; a logger that discards; and names for sizes. Its
// subpackage testcert holds a certificate for loopback.
//
// It is test support: everything binds to loopback and is meant to be
// closed by the test that started it.
package proxytest
