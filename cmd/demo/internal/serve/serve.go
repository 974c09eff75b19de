// Package serve runs an http.Handler over TLS with HTTP/2 on a listener of
// its own, the way the demo's upstream and proxy are served.
package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// ErrListen reports an address that could not be listened on.
var ErrListen = errors.New("serve: listen")

// Server is one running TLS HTTP/2 server. Its methods are safe for
// concurrent use.
type Server struct {
	srv  *http.Server
	url  string
	done chan struct{} // closed once Serve returned
	err  error         // Serve's result; written before done is closed
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves h with
// cert, offering HTTP/2 and HTTP/1.1. On failure nothing is left running.
// Server errors (failed handshakes and the like) go to logger at debug level.
func Start(addr string, h http.Handler, cert tls.Certificate, logger *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrListen, err)
	}
	srv := &http.Server{
		Handler: h,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert},
			MinVersion:   tls.VersionTLS12,
		},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	srv.Protocols = &protocols
	s := &Server{srv: srv, url: "https://" + ln.Addr().String(), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	}()
	return s, nil
}

// URL is the server's base URL, https://host:port with the real port.
func (s *Server) URL() string { return s.url }

// Done is closed once the server stopped serving.
func (s *Server) Done() <-chan struct{} { return s.done }

// Shutdown stops accepting, lets the requests in flight finish until ctx
// ends, then closes every connection, and returns once the server goroutine
// exited. It returns ctx's error if requests were cut short, or the error
// that stopped Serve early.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	<-s.done
	return errors.Join(err, s.err)
}
