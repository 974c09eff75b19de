// Package proxytest holds the test servers and proxies that the module's
// tests and benchmarks share: a TLS HTTP/2 server on loopback that ends a
// fraction of its connections with a graceful GOAWAY, as a Kubernetes API
// server started with --goaway-chance does; a hand-written forwarding
// proxy; a logger that discards; and names for sizes.
//
// It is test support: everything binds to loopback and is meant to be
// closed by the test that started it.
package proxytest
