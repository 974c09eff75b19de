package main

import (
	"context"
	"time"

	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/upstream"
)

// shutdownTimeout bounds a server's graceful shutdown.
const shutdownTimeout = 10 * time.Second

const upstreamSynopsis = "demo upstream [-listen 127.0.0.1:0] [-goaway-chance 0.02] -write-kubeconfig F"

// runUpstream is "demo upstream": serves until SIGINT or SIGTERM.
func runUpstream(ctx context.Context, args []string, c *cli) int {
	fs := newFlags("upstream", upstreamSynopsis, c)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	chance := unitFlag(0.02)
	fs.Var(&chance, "goaway-chance", "chance that a request gets a GOAWAY (the API server's --goaway-chance, at most 0.02 there)")
	out := fs.String("write-kubeconfig", "", "write the kubeconfig for this server here, once it listens (required)")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	if *out == "" {
		return fail(c, "upstream", usageErr("-write-kubeconfig is required"))
	}
	log := c.logger()
	up, err := upstream.Start(upstream.Options{Listen: *listen, GoawayChance: float64(chance), Logger: log})
	if err != nil {
		return fail(c, "upstream", usageErr("%v", err))
	}
	if err := kubeconfig.Write(*out, up.Spec()); err != nil {
		_ = up.Shutdown(context.Background())
		return fail(c, "upstream", err)
	}
	log.Info("upstream listening", "url", up.Spec().Server, "goaway_chance", float64(chance), "kubeconfig", *out)
	if c.ready != nil {
		c.ready(*out)
	}
	select {
	case <-ctx.Done():
	case <-up.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := up.Shutdown(sctx); err != nil {
		return fail(c, "upstream", err)
	}
	log.Info("upstream stopped")
	return exitOK
}
