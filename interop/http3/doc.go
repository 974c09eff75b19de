// Package http3 tests teebody's transport in front of HTTP/3 upstreams
// served by quic-go. It holds tests only: the facts of quic-go's
// http3.Transport that the library relies on, and a load test of upstreams
// restarted with a graceful shutdown.
package http3
