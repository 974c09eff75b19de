package load

import (
	"fmt"
	"net/http"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
)

// client is a clientset with connections of its own, so that a run neither
// shares client-go's cached transports with another run nor leaves
// connections open after it.
type client struct {
	*kubernetes.Clientset
	rt http.RoundTripper
}

func newClient(base *rest.Config, opts Options, noRetryBodies bool) (*client, error) {
	cfg := kubeconfig.Isolated(base)
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	if noRetryBodies {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return noRetry{rt: rt} })
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	return &client{Clientset: cs, rt: hc.Transport}, nil
}

// close closes the client's idle connections; after a run all of them are.
func (c *client) close() { utilnet.CloseIdleConnectionsFor(c.rt) }
