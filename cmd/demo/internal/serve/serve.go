// Package serve runs the demo's servers (the embedded API server and the
// proxy) as an API server runs: over TLS with HTTP/2 on a listener of its
// own, with a certificate (its own, or a fresh one), behind a bearer token
// (RequireToken), and hands out the kubeconfig that reaches it.
package serve

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
)

// ErrListen reports an address that could not be listened on.
var ErrListen = errors.New("serve: listen")

// Options configure Start.
type Options struct {
	Name    string // the kubeconfig's cluster, user and context
	Listen  string // "127.0.0.1:0" when empty (port 0: any free port)
	Handler http.Handler
	// Token is the bearer token Handler requires (see RequireToken),
	// written into the kubeconfig.
	Token string
	// Cert is the serving certificate; zero: a fresh SelfSigned one.
	Cert Pair
	// Logger gets the server's errors (failed handshakes and the like) at
	// debug level; nil discards them.
	Logger *slog.Logger
}

// Running is a server that the demo runs: "demo proxy", "demo upstream".
type Running interface {
	Spec() kubeconfig.Spec          // the kubeconfig that reaches it
	Done() <-chan struct{}          // closed once it stopped serving, if it may stop on its own
	Shutdown(context.Context) error // stops it
}

// Server is one running TLS HTTP/2 server. Its methods are safe for
// concurrent use.
type Server struct {
	srv  *http.Server
	spec kubeconfig.Spec
	done chan struct{} // closed once Serve returned
	err  error         // Serve's result; written before done is closed
}

// Start listens and serves opts.Handler, offering HTTP/2 and HTTP/1.1. On
// failure nothing is left running.
func Start(opts Options) (*Server, error) {
	if opts.Cert.CAData == nil {
		pair, err := SelfSigned()
		if err != nil {
			return nil, err
		}
		opts.Cert = pair
	}
	logger := cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	ln, err := net.Listen("tcp", cmp.Or(opts.Listen, "127.0.0.1:0"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrListen, err)
	}
	srv := &http.Server{
		Handler:           opts.Handler,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{opts.Cert.Cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
		Protocols:         new(http.Protocols),
	}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(true)
	s := &Server{srv: srv, done: make(chan struct{}), spec: kubeconfig.Spec{
		Name:   opts.Name,
		Server: "https://" + ln.Addr().String(),
		CAData: opts.Cert.CAData,
		Token:  opts.Token,
	}}
	go func() {
		defer close(s.done)
		if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	}()
	return s, nil
}

// Spec is the kubeconfig that reaches the server: its URL (https://host:port
// with the real port), CA and token.
func (s *Server) Spec() kubeconfig.Spec { return s.spec }

// Done is closed once the server stopped serving.
func (s *Server) Done() <-chan struct{} { return s.done }

// Shutdown stops accepting, lets the requests in flight finish until ctx
// ends, then closes every connection, and returns once the server goroutine
// exited. It returns ctx's error if requests were cut short, joined with
// the error that stopped Serve early, if any.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	<-s.done
	return errors.Join(err, s.err)
}
