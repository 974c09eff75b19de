//go:build unix

package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"
)

// rollingGrace bounds an old server's Shutdown; after it the server is closed, and the restart counted as forced.
const rollingGrace = 10 * time.Second

// rollingUpstream is a Go server, HTTP/2 over TLS on loopback, that restarts as a rolling update restarts a Go
// program: a new server starts, then the old one shuts down with http.Server.Shutdown. The listening socket passes
// from each server to the next, so no connection is ever refused: every server serves its own duplicate of one
// listener's descriptor, and Shutdown closes only that duplicate.
//
// Its methods are not safe for concurrent use: one goroutine restarts it.
type rollingUpstream struct {
	ln       *net.TCPListener // the socket: held open from start to close, never served itself
	url      string           // https://127.0.0.1:port
	handler  http.Handler
	tls      *tls.Config
	errorLog *log.Logger

	srv    *http.Server // the serving server
	served chan error   // srv's ServeTLS result

	restarts, forced int // restarts done; of them, those whose old server had to be closed after rollingGrace
}

// startRollingUpstream listens on a free loopback port and serves h there with cert.
func startRollingUpstream(h http.Handler, cert tls.Certificate, errorLog *log.Logger) (*rollingUpstream, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &rollingUpstream{
		ln:       l.(*net.TCPListener),
		url:      "https://" + l.Addr().String(),
		handler:  h,
		tls:      &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		errorLog: errorLog,
	}
	if err := u.serveNext(); err != nil {
		l.Close()
		return nil, err
	}
	return u, nil
}

// serveNext starts a new server on a duplicate of the listener and makes it the serving one.
func (u *rollingUpstream) serveNext() error {
	f, err := u.ln.File() // a duplicate descriptor of the same socket
	if err != nil {
		return err
	}
	l, err := net.FileListener(f) // and a duplicate of that one, which the new server owns
	f.Close()
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: u.handler, TLSConfig: u.tls.Clone(), ErrorLog: u.errorLog, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(l, "", "") }()
	u.srv, u.served = srv, served
	return nil
}

// restart starts a new server, then shuts the old one down and waits until its Serve has returned.
func (u *rollingUpstream) restart() error {
	old, oldServed := u.srv, u.served
	if err := u.serveNext(); err != nil {
		return err
	}
	if err := shutdown(old, oldServed); errors.Is(err, context.DeadlineExceeded) {
		u.forced++
	} else if err != nil {
		return err
	}
	u.restarts++
	return nil
}

// close shuts the serving server down and closes the socket.
func (u *rollingUpstream) close() error {
	err := shutdown(u.srv, u.served)
	return errors.Join(err, u.ln.Close())
}

// shutdown shuts srv down, closes it after rollingGrace (then returning context.DeadlineExceeded), and waits for
// its Serve's result on served.
func shutdown(srv *http.Server, served <-chan error) error {
	ctx, cancel := context.WithTimeout(context.Background(), rollingGrace)
	defer cancel()
	err := srv.Shutdown(ctx)
	if err != nil {
		srv.Close()
	}
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("serve: %w", serr))
	}
	return err
}
