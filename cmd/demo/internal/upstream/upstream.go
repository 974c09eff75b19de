// Package upstream runs the embedded fake API server (package fakeapi) over
// TLS and HTTP/2 on loopback, with a fresh certificate and bearer token.
package upstream

import (
	"context"
	"crypto/rand"
	"log/slog"

	"github.com/teebody/teebody/cmd/demo/internal/certs"
	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
)

// Options configure Start.
type Options struct {
	Listen       string  // "127.0.0.1:0" when empty
	GoawayChance float64 // see fakeapi.Options
	Logger       *slog.Logger
}

// Upstream is a running fake API server. Its methods are safe for
// concurrent use.
type Upstream struct {
	srv  *serve.Server
	spec kubeconfig.Spec
}

// Start serves a new fake API server. On failure nothing is left running.
func Start(opts Options) (*Upstream, error) {
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	pair, err := certs.SelfSigned()
	if err != nil {
		return nil, err
	}
	token := rand.Text()
	h := fakeapi.New(fakeapi.Options{GoawayChance: opts.GoawayChance, Token: token})
	srv, err := serve.Start(opts.Listen, h, pair.Cert, opts.Logger)
	if err != nil {
		return nil, err
	}
	return &Upstream{srv: srv, spec: kubeconfig.Spec{
		Name:   "teebody-upstream",
		Server: srv.URL(),
		CAData: pair.CAData,
		Token:  token,
	}}, nil
}

// Spec is the kubeconfig that reaches the server.
func (u *Upstream) Spec() kubeconfig.Spec { return u.spec }

// Done is closed once the server stopped.
func (u *Upstream) Done() <-chan struct{} { return u.srv.Done() }

// Shutdown stops the server; see serve.Server.Shutdown.
func (u *Upstream) Shutdown(ctx context.Context) error { return u.srv.Shutdown(ctx) }
