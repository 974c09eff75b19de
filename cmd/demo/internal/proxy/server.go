package proxy

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/teebody/teebody/cmd/demo/internal/serve"
)

// Server is a Proxy served over TLS and HTTP/2. Its methods are safe for
// concurrent use.
type Server struct {
	*Proxy
	*serve.Server
}

// Start serves a new Proxy on listen ("127.0.0.1:0" when empty) with cert
// (zero: a fresh self-signed one) and a fresh bearer token (opts.Token is
// replaced). On failure nothing is left running.
func Start(opts Options, listen string, cert serve.Pair) (*Server, error) {
	opts.Token = rand.Text()
	p, err := New(opts)
	if err != nil {
		return nil, err
	}
	srv, err := serve.Start(serve.Options{
		Name: "teebody-proxy", Listen: listen, Handler: p, Token: opts.Token, Cert: cert, Logger: opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	return &Server{Proxy: p, Server: srv}, nil
}

// Shutdown stops serving (letting requests in flight finish until ctx
// ends), then waits until the transport gave back every buffer, then closes
// the upstream connections. It returns their errors joined.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.Server.Shutdown(ctx)
	if tr := s.Transport(); tr != nil {
		err = errors.Join(err, tr.Drain(ctx))
	}
	s.CloseIdleConnections()
	return err
}
