package fakeapi

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"log/slog"

	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
	"github.com/teebody/teebody/pkg/goawaytest"
)

// upstreamName is the kubeconfig's cluster, user and context.
const upstreamName = "teebody-upstream"

// Start serves a new API over TLS and HTTP/2 on 127.0.0.1 and a free port,
// with a fresh certificate and bearer token (opts.Token is replaced). With
// GoawayAfter, a goawaytest.Server serves it, which ends each connection
// after that many requests (goawaytest.EndAfter), and speaks HTTP/2 alone;
// without, an http.Server does, as the API server does. Server errors go
// to logger (nil: nowhere). On failure nothing is left running.
func Start(opts Options, logger *slog.Logger) (serve.Running, error) {
	pair, err := serve.SelfSigned()
	if err != nil {
		return nil, err
	}
	opts.Token = rand.Text()
	if opts.GoawayAfter <= 0 {
		return serve.Start(serve.Options{Name: upstreamName, Handler: New(opts), Token: opts.Token, Cert: pair, Logger: logger})
	}
	s := goawaytest.NewUnstartedServer(New(opts), goawaytest.EndAfter(int(opts.GoawayAfter)))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{pair.Cert}, MinVersion: tls.VersionTLS12}
	s.Config.ErrorLog = slog.NewLogLogger(cmp.Or(logger, slog.New(slog.DiscardHandler)).Handler(), slog.LevelDebug)
	s.StartTLS()
	return goawayServer{s, kubeconfig.Spec{Name: upstreamName, Server: s.URL, CAData: pair.CAData, Token: opts.Token}}, nil
}

// goawayServer is the API on a goawaytest.Server.
type goawayServer struct {
	*goawaytest.Server
	spec kubeconfig.Spec
}

func (s goawayServer) Spec() kubeconfig.Spec { return s.spec }

// Done returns nil: the server serves until Shutdown.
func (s goawayServer) Done() <-chan struct{} { return nil }

// Shutdown closes the server and its connections without waiting for ctx,
// and returns nil once every handler has returned.
func (s goawayServer) Shutdown(context.Context) error {
	s.Close()
	return nil
}
