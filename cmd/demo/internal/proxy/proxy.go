// Package proxy is the demo's Kubernetes API reverse proxy: it forwards
// authenticated requests to an upstream API server with the upstream's own
// credentials, through the teebody transport (or without it, for
// comparison), and serves Prometheus metrics of the transport's Stats.
package proxy

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
	teebodyprom "github.com/teebody/teebody/contrib/prometheus"
	"github.com/teebody/teebody/pkg/transport"
)

// ErrUpstream reports an upstream config the proxy cannot forward to.
var ErrUpstream = errors.New("proxy: upstream")

// Options configure a Proxy.
type Options struct {
	// Upstream is where requests go, with its credentials (client-go's
	// transport config: certificates, tokens, exec plugins).
	Upstream *rest.Config
	// NoFix forwards without the teebody transport, so that a GOAWAY from
	// the upstream fails the request (502) as it does for any reverse proxy.
	NoFix bool
	// Transport configures the teebody transport; ignored with NoFix.
	Transport transport.Config
	// Chain is how the upstream transport is built (empty: ChainClientGo).
	// With ChainTeleport the teebody transport goes innermost, right above
	// the *http.Transport, as it would in Teleport's agent.
	Chain Chain
	// Token is the bearer token clients must send; others get 401.
	Token  string
	Logger *slog.Logger
}

// Proxy is the handler. It is safe for concurrent use.
type Proxy struct {
	handler  http.Handler
	tr       *transport.Transport // nil with NoFix
	inner    http.RoundTripper    // the transport that owns the upstream connections
	attempts attemptCounter       // the Reports of the forwarded requests; unused with NoFix
}

// New builds a Proxy. It opens no connection until the first request.
func New(opts Options) (*Proxy, error) {
	if opts.Token == "" {
		return nil, fmt.Errorf("%w: no client token", ErrUpstream)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg := kubeconfig.Isolated(opts.Upstream) // the proxy's connections are its own to close
	target, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUpstream, err)
	}
	p := &Proxy{}
	errorLog := slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	tcfg := opts.Transport
	tcfg.ErrorLog = errorLog
	var upstream http.RoundTripper // what the ReverseProxy sends with
	switch opts.Chain {
	case "", ChainClientGo:
		p.inner, err = rest.TransportFor(cfg)
		upstream = p.inner
		if err == nil && !opts.NoFix {
			p.tr = transport.New(p.inner, tcfg)
			upstream = p.tr
		}
	case ChainTeleport:
		var wrap func(http.RoundTripper) http.RoundTripper
		if !opts.NoFix {
			wrap = func(rt http.RoundTripper) http.RoundTripper {
				p.tr = transport.New(rt, tcfg)
				return p.tr
			}
		}
		upstream, p.inner, err = teleportChain(cfg, wrap)
	default:
		err = fmt.Errorf("unknown chain %q (want one of %v)", opts.Chain, Chains)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUpstream, err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// The client's credentials are for this proxy; the upstream's
			// transport adds its own (and skips a request that has some).
			pr.Out.Header.Del("Authorization")
		},
		ErrorLog: errorLog,
	}
	rp.Transport = upstream
	var forward http.Handler = rp
	if p.tr == nil {
		rp.ErrorHandler = badGateway(logger)
	} else {
		rp.ErrorHandler = p.tr.Responder().Error // Kubernetes Status bodies, which kubectl decodes
		forward = p.attempts.wrap(rp)
	}

	reg := prometheus.NewRegistry()
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "teebody_proxy_requests_total",
		Help: "Requests answered by the proxy, by method and status code (401s included).",
	}, []string{"method", "code"})
	reg.MustRegister(requests, collectors.NewGoCollector())
	if p.tr != nil {
		reg.MustRegister(teebodyprom.NewCollector(p.tr.Stats))
	}
	mux := http.NewServeMux()
	// Unauthenticated, as exporters are: it holds counters, no secrets.
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: errorLog}))
	mux.Handle("/", serve.RequireToken(opts.Token, forward))
	p.handler = promhttp.InstrumentHandlerCounter(requests, mux)
	return p, nil
}

// ServeHTTP serves /metrics, and forwards everything else.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.handler.ServeHTTP(w, r) }

// Stats is the teebody transport's Stats; false with NoFix.
func (p *Proxy) Stats() (transport.Stats, bool) {
	if p.tr == nil {
		return transport.Stats{}, false
	}
	return p.tr.Stats(), true
}

// Attempts adds up the transport.Report of every request forwarded so far;
// false with NoFix.
func (p *Proxy) Attempts() (Attempts, bool) {
	if p.tr == nil {
		return Attempts{}, false
	}
	return p.attempts.load(), true
}

// Transport is the teebody transport, nil with NoFix.
func (p *Proxy) Transport() *transport.Transport { return p.tr }

// CloseIdleConnections closes the idle upstream connections.
func (p *Proxy) CloseIdleConnections() { utilnet.CloseIdleConnectionsFor(p.inner) }
