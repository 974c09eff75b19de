// Package noisytest holds a proxy stack on loopback for measuring what noisy
// clients, slow or stalled, cost the others: HTTP/1.1 clients, an
// httputil.ReverseProxy over transport.New with its ErrorHandler, and a TLS
// HTTP/2 upstream that ends 5% of its connections with a GOAWAY after a
// response, as kube-apiserver's --goaway-chance=0.05 would. It holds the
// stalled scenario too: uploads that send part of their body and stall on
// a small budget, with small writes behind them.
//
// It is test support: everything binds to loopback and is closed when the
// test or benchmark that started it ends.
package noisytest
