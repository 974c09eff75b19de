package proxy

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/http2"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	clienttransport "k8s.io/client-go/transport"
)

// Chain names how the proxy builds its upstream transport.
type Chain string

const (
	// ChainClientGo is client-go's own transport (rest.TransportFor), with
	// the teebody transport on top of it: the default.
	ChainClientGo Chain = "client-go"
	// ChainTeleport is the chain of Teleport's Kubernetes agent
	// (newDirectTransport in its lib/kube/proxy): an *http.Transport
	// configured by x/net's http2.ConfigureTransport, then apimachinery's
	// utilnet.SetTransportDefaults, the teebody transport innermost (unless
	// NoFix), client-go's transport.HTTPWrappersForConfig with an
	// impersonation config, and an instrumentation wrapper outermost.
	ChainTeleport Chain = "teleport"
)

// Chains lists the chains Options.Chain accepts.
var Chains = []Chain{ChainClientGo, ChainTeleport}

// The identity ChainTeleport impersonates, as Teleport's agent impersonates
// the user it forwards for. The upstream credentials need the impersonate
// verb on users and groups.
const (
	ImpersonateUser  = "teebody-teleport-chain"
	ImpersonateGroup = "system:masters"
)

// teleportChain builds the ChainTeleport transport for cfg. wrap, when not
// nil, wraps the *http.Transport before client-go's wrappers go on top of
// it. It returns the whole chain and the *http.Transport at its bottom,
// which owns the connections.
func teleportChain(cfg *rest.Config, wrap func(http.RoundTripper) http.RoundTripper) (http.RoundTripper, *http.Transport, error) {
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	tlsConfig = tlsConfig.Clone() // nil stays nil: ConfigureTransport makes one
	if tlsConfig != nil {
		tlsConfig.NextProtos = []string{http2.NextProtoTLS, "http/1.1"}
	}
	base := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
		TLSClientConfig:     tlsConfig,
		MaxIdleConns:        1000,
		MaxIdleConnsPerHost: 1000,
		IdleConnTimeout:     90 * time.Second,
	}
	if configureBeforeDefaults {
		//lint:ignore SA1019 deprecated, but what Teleport's agent calls: the chain reproduces it
		if err := http2.ConfigureTransport(base); err != nil {
			return nil, nil, fmt.Errorf("http2.ConfigureTransport: %w", err)
		}
	}
	// SetTransportDefaults configures HTTP/2 too: after ConfigureTransport,
	// on Go 1.26, that second time fails (already registered), which it logs
	// as a klog warning, as it does in Teleport's agent.
	base = utilnet.SetTransportDefaults(base)

	var rt http.RoundTripper = base
	if wrap != nil {
		rt = wrap(rt)
	}
	tcfg, err := cfg.TransportConfig()
	if err != nil {
		return nil, nil, err
	}
	tcfg.Impersonate = clienttransport.ImpersonationConfig{UserName: ImpersonateUser, Groups: []string{ImpersonateGroup}}
	rt, err = clienttransport.HTTPWrappersForConfig(tcfg, rt)
	if err != nil {
		return nil, nil, err
	}
	return instrumented{rt}, base, nil
}

// instrumented stands in for Teleport's instrumentation (Prometheus and
// tracing wrappers): like a tracing transport, it sends a clone of each
// request whose body is wrapped in a reader of its own (GetBody kept), so
// the wrappers below see neither the caller's request nor its body.
type instrumented struct{ next http.RoundTripper }

func (t instrumented) RoundTrip(r *http.Request) (*http.Response, error) {
	out := r.Clone(r.Context())
	if r.Body != nil && r.Body != http.NoBody {
		out.Body = struct{ io.ReadCloser }{r.Body}
	}
	return t.next.RoundTrip(out)
}

// WrappedRoundTripper follows apimachinery's RoundTripperWrapper
// convention, as client-go's wrappers do.
func (t instrumented) WrappedRoundTripper() http.RoundTripper { return t.next }
