package proxy

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"

	"github.com/teebody/teebody/cmd/demo/internal/certs"
	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
)

// ServerOptions configure Start.
type ServerOptions struct {
	Options
	Listen string     // "127.0.0.1:0" when empty
	Cert   certs.Pair // zero: a fresh self-signed certificate
}

// Server is a Proxy served over TLS and HTTP/2. Its methods are safe for
// concurrent use.
type Server struct {
	*Proxy
	srv  *serve.Server
	spec kubeconfig.Spec
}

// Start serves a new Proxy. A missing Options.Token is generated. On
// failure nothing is left running.
func Start(opts ServerOptions) (*Server, error) {
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.Token == "" {
		opts.Token = rand.Text()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Cert.CAData == nil {
		pair, err := certs.SelfSigned()
		if err != nil {
			return nil, err
		}
		opts.Cert = pair
	}
	p, err := New(opts.Options)
	if err != nil {
		return nil, err
	}
	srv, err := serve.Start(opts.Listen, p, opts.Cert.Cert, opts.Logger)
	if err != nil {
		return nil, err
	}
	return &Server{Proxy: p, srv: srv, spec: kubeconfig.Spec{
		Name:   "teebody-proxy",
		Server: srv.URL(),
		CAData: opts.Cert.CAData,
		Token:  opts.Token,
	}}, nil
}

// Spec is the kubeconfig that reaches the proxy.
func (s *Server) Spec() kubeconfig.Spec { return s.spec }

// Done is closed once the server stopped.
func (s *Server) Done() <-chan struct{} { return s.srv.Done() }

// Shutdown stops serving (letting requests in flight finish until ctx
// ends), then waits until the transport gave back every buffer, then closes
// the upstream connections. It returns the first of their errors.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if tr := s.Transport(); tr != nil {
		err = errors.Join(err, tr.Drain(ctx))
	}
	s.CloseIdleConnections()
	return err
}
