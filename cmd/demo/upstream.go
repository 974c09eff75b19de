package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
)

// shutdownTimeout bounds a server's graceful shutdown.
const shutdownTimeout = 10 * time.Second

const upstreamSynopsis = "demo upstream [-goaway-chance 0.02] [-goaway-after 0] -write-kubeconfig F"

// goawayFlags are the embedded API server's two GOAWAY sources.
type goawayFlags struct {
	chance float64
	after  int64
}

func (g *goawayFlags) register(fs *flag.FlagSet, chance float64) {
	fs.Float64Var(&g.chance, "goaway-chance", chance, "chance that a request gets a GOAWAY: the API server's --goaway-chance (at most 0.02 there)")
	fs.Int64Var(&g.after, "goaway-after", 0, "end every connection with a GOAWAY after this many requests, as nginx "+
		"(keepalive_requests, 1000) and AWS's load balancer (10000) do; 0: never")
}

func (g *goawayFlags) options() (fakeapi.Options, error) {
	if !(g.chance >= 0 && g.chance <= 1) { // NaN too
		return fakeapi.Options{}, usageErr("-goaway-chance must be between 0 and 1, not %v", g.chance)
	}
	if g.after < 0 {
		return fakeapi.Options{}, usageErr("-goaway-after must not be negative, not %d", g.after)
	}
	return fakeapi.Options{GoawayChance: g.chance, GoawayAfter: g.after}, nil
}

// String says which GOAWAYs the server sends.
func (g *goawayFlags) String() string {
	var s []string
	if g.chance > 0 || g.after == 0 {
		s = append(s, fmt.Sprintf("--goaway-chance %g", g.chance))
	}
	if g.after > 0 {
		s = append(s, fmt.Sprintf("a GOAWAY after every %d requests per connection", g.after))
	}
	return strings.Join(s, " and ")
}

// runUpstream is "demo upstream": serves until SIGINT or SIGTERM.
func runUpstream(ctx context.Context, args []string, c *cli) int {
	fs := newFlags("upstream", upstreamSynopsis, c)
	var gf goawayFlags
	gf.register(fs, 0.02)
	out := fs.String("write-kubeconfig", "", "write the kubeconfig for this server here, once it listens (required)")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	if *out == "" {
		return fail(c, "upstream", usageErr("-write-kubeconfig is required"))
	}
	opts, err := gf.options()
	if err != nil {
		return fail(c, "upstream", err)
	}
	log := c.logger()
	up, err := c.upstream(opts, log)
	if err != nil {
		return fail(c, "upstream", err)
	}
	err = serveUntilStopped(ctx, c, log, "upstream", up, *out, func() {
		log.Info("upstream listening", "url", up.Spec().Server, "goaway_chance", opts.GoawayChance,
			"goaway_after", opts.GoawayAfter, "kubeconfig", *out)
	})
	if err != nil {
		return fail(c, "upstream", err)
	}
	log.Info("upstream stopped")
	return exitOK
}

// serveUntilStopped writes srv's kubeconfig to out, calls listening and
// c.ready, serves until ctx ends (SIGINT, SIGTERM) or srv stops, and shuts
// srv down, logging that it does as name.
func serveUntilStopped(ctx context.Context, c *cli, log *slog.Logger, name string, srv serve.Running, out string, listening func()) error {
	if err := kubeconfig.Write(out, srv.Spec()); err != nil {
		_ = srv.Shutdown(context.Background())
		return err
	}
	listening()
	if c.ready != nil {
		c.ready(out)
	}
	select {
	case <-ctx.Done():
	case <-srv.Done():
	}
	log.Info(name + " shutting down")
	return shutdown(srv.Shutdown)
}

// shutdown stops a server within shutdownTimeout.
func shutdown(f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	return f(ctx)
}
