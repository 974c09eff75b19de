package transport_test

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

// memListener is a net.Listener of in-memory connections (net.Pipe), for
// HTTP/1 servers inside a testing/synctest bubble, where a wait on them is
// durable and timers run on the bubble's clock.
type memListener struct {
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

// dial connects to the listener, as an http.Transport's DialContext.
func (l *memListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "mem" }

// memServe serves h over HTTP/1.1 on in-memory connections and returns the
// URL to send requests to and a transport that reaches it; it must run
// inside a synctest bubble. Both are shut down at the end of the test.
func memServe(t *testing.T, h http.Handler) (string, *http.Transport) {
	l := newMemListener()
	srv := &http.Server{Handler: h, ErrorLog: proxytest.QuietLog()}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(l)
	}()
	tr := &http.Transport{DialContext: l.dial, DisableCompression: true}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
		<-served
	})
	return "http://mem.test", tr
}
