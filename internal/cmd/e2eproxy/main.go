// Command e2eproxy is the Go reverse proxy that the end-to-end suite (e2e)
// puts in front of a real nginx (TestNginx) and of Go upstreams that restart
// in turn (TestRollingRestart): an httputil.ReverseProxy on loopback to one
// or more HTTPS upstreams, taken in turn, over a plain *http.Transport
// (HTTP/2, trusting only the given CA) or over teebody's transport. The
// suite's module cannot import this repository's library (it would move the
// versions kube-apiserver is built with), so it runs this as a process.
//
//	e2eproxy -upstream https://127.0.0.1:8443 [-upstream ...] -ca cert.pem -mode plain|teebody|adaptive -addr-file addr
//
// It listens on -listen (127.0.0.1:0 by default, plain HTTP/1.1), writes
// its address to -addr-file once it accepts connections, forwards every
// request but GET /_e2e/stats, which answers the transport's Stats as JSON
// ({} in plain mode), and logs the errors it answers with 502 ("http: proxy
// error: ...") to stderr. On SIGTERM or SIGINT it shuts down, waits until
// the transport released every body, and exits 0.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/teebody/teebody/pkg/transport"
)

// ErrUsage reports a bad command line.
var ErrUsage = errors.New("e2eproxy: usage")

// shutdownTimeout bounds the wait for requests in flight at shutdown.
const shutdownTimeout = 30 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// options are the command line's.
type options struct {
	upstreams []*url.URL
	caFile    string
	mode      string
	listen    string
	addrFile  string
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("e2eproxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.Func("upstream", "an upstream's https URL (one or more, taken in turn)", func(s string) error {
		u, err := url.Parse(s)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("%q: want an https URL", s)
		}
		o.upstreams = append(o.upstreams, u)
		return nil
	})
	fs.StringVar(&o.caFile, "ca", "", "PEM file of the certificates the upstreams' must chain to (required)")
	fs.StringVar(&o.mode, "mode", "plain", "plain (net/http's transport), teebody (transport.New with DefaultConfig) or adaptive (the same with Adaptive)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "address to listen on")
	fs.StringVar(&o.addrFile, "addr-file", "", "file to write the listening address to (required)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	switch {
	case len(o.upstreams) == 0:
		return o, fmt.Errorf("%w: -upstream is required", ErrUsage)
	case o.caFile == "" || o.addrFile == "":
		return o, fmt.Errorf("%w: -ca and -addr-file are required", ErrUsage)
	case o.mode != "plain" && o.mode != "teebody" && o.mode != "adaptive":
		return o, fmt.Errorf("%w: -mode %q: want plain, teebody or adaptive", ErrUsage, o.mode)
	}
	return o, nil
}

// run serves until ctx ends, then shuts down.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	o, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}
	return serve(ctx, o, log.New(stderr, "", log.LstdFlags), func(addr net.Addr) error {
		return os.WriteFile(o.addrFile, []byte(addr.String()), 0o644)
	})
}

// serve proxies as o says until ctx ends, calling ready with the listening
// address once connections are accepted (an error from ready stops it),
// then shuts down and waits until the transport released every body.
func serve(ctx context.Context, o options, errorLog *log.Logger, ready func(net.Addr) error) error {
	caPEM, err := os.ReadFile(o.caFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("e2eproxy: no certificate in %s", o.caFile)
	}
	inner := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 64,
	}
	defer inner.CloseIdleConnections()
	var next atomic.Uint64 // the upstream of the next request, modulo their number
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(o.upstreams[(next.Add(1)-1)%uint64(len(o.upstreams))])
		},
		Transport: inner,
		ErrorLog:  errorLog, // ReverseProxy's own 502 logs its "http: proxy error: ..." here
	}
	var tr *transport.Transport
	if o.mode != "plain" {
		cfg := transport.DefaultConfig()
		cfg.Adaptive = o.mode == "adaptive"
		cfg.ErrorLog = errorLog
		tr = transport.New(inner, cfg)
		rp.Transport, rp.ErrorHandler = tr, tr.ErrorHandler
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /_e2e/stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var v any = struct{}{}
		if tr != nil {
			v = tr.Stats()
		}
		_ = json.NewEncoder(w).Encode(v)
	})
	mux.Handle("/", rp)

	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ErrorLog: errorLog, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	if err := ready(l.Addr()); err != nil {
		srv.Close()
		<-served
		return err
	}
	errorLog.Printf("e2eproxy: %s mode, listening on %s, forwarding to %v in turn", o.mode, l.Addr(), o.upstreams)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	<-served
	if tr != nil {
		err = errors.Join(err, tr.Drain(sctx))
	}
	return err
}
