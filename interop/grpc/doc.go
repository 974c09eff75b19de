// Package grpc tests teebody's transport behind httputil.ReverseProxy in
// front of grpc-go servers. It holds tests only: unary, client-streaming and
// bidirectional RPCs through upstreams whose connections end after a short
// keepalive.ServerParameters.MaxConnectionAge, and the gRPC answer of
// Transport.ErrorHandler when a request cannot be replayed.
package grpc
