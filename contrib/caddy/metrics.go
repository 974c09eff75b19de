package teebodycaddy

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"

	teebodyprom "github.com/teebody/teebody/contrib/prometheus"
)

// metricsLabel is the label that tells the transports of one config apart.
const metricsLabel = "transport"

// registerMetrics registers a collector of t's Stats in the registry of
// Caddy's config, labelled with t.Name, choosing a default name when it is
// empty (see Transport.Name). It sets t.unregister.
func (t *Transport) registerMetrics(ctx caddy.Context) error {
	reg := ctx.GetMetricsRegistry()
	if reg == nil {
		return nil
	}
	c := teebodyprom.NewCollector(t.tr.Stats)
	try := func(name string) (prometheus.Registerer, error) {
		r := prometheus.WrapRegistererWith(prometheus.Labels{metricsLabel: name}, reg)
		return r, r.Register(c)
	}
	if t.Name != "" {
		r, err := try(t.Name)
		if err != nil {
			return fmt.Errorf("teebody: name: %q: %w", t.Name, err)
		}
		t.unregister = func() bool { return r.Unregister(c) }
		return nil
	}
	for i := 0; ; i++ {
		name := strconv.Itoa(i)
		r, err := try(name)
		var dup prometheus.AlreadyRegisteredError
		if errors.As(err, &dup) {
			continue
		}
		if err != nil {
			return fmt.Errorf("teebody: metrics: %w", err)
		}
		t.Name = name
		t.unregister = func() bool { return r.Unregister(c) }
		return nil
	}
}
