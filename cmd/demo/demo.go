package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/load"
	"github.com/teebody/teebody/cmd/demo/internal/proxy"
	"github.com/teebody/teebody/cmd/demo/internal/report"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
	"github.com/teebody/teebody/pkg/transport"
)

// Defaults of the five-way run, chosen so that it shows GOAWAY failures
// without the fix on every run and ends well within a minute on two cores:
// at the original experiment's QPS 100 requests seldom overlap on a
// connection when its GOAWAY comes, and the failure is rare; without a
// tight rate limit ten workers keep several streams in flight on the
// connection, and each GOAWAY catches some of them.
const (
	demoQPS         = 5000
	demoChance      = 0.02
	demoSmallBudget = 256
)

const demoSynopsis = "demo [-workers 10] [-ops 100] [-body-size 1024] [-goaway-chance 0.02] [-goaway-after 0] " +
	"[-qps 5000] [-burst 0] [-small-budget 256] [-retry-after 1s] [-out DIR] [-markdown] [-quiet] [-v]"

// stage is one of the five configurations.
type stage struct {
	name    string
	file    string            // base name of its files in the output folder
	proxy   *transport.Config // nil: direct; else the proxy's transport config
	noFix   bool              // the proxy forwards without the fix
	noRetry bool              // the client clears GetBody
}

// outcome is a stage's result, with the proxy's transport stats and what
// its requests' Reports add up to.
type outcome struct {
	res      *load.Result
	stats    *transport.Stats // nil without the fix
	attempts proxy.Attempts   // zero without the fix
}

// fiveWay is what the five configurations showed, against an upstream
// with that GOAWAY chance.
type fiveWay struct {
	direct, noFix, fix, small, adaptive outcome
	chance                              float64
}

// runDemo is "demo": the five-way run; exit 1 if a fixed proxy let a
// failure through.
func runDemo(ctx context.Context, args []string, c *cli) int {
	fs := newFlags("", demoSynopsis, c)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\nusage: %s\n\nThe same load against an embedded API server that sends GOAWAYs: directly,\n"+
			"through a reverse proxy without the fix, with it, with it and a budget too small for the bodies, and with it in\n"+
			"adaptive mode (buffering only once the upstream sent GOAWAY).\n\nflags:\n", usage, demoSynopsis)
		fs.PrintDefaults()
	}
	var lf loadFlags
	lf.register(fs, demoQPS)
	var gf goawayFlags
	gf.register(fs, demoChance)
	small := sizeFlag(demoSmallBudget)
	fs.Var(&small, "small-budget", "the budget of the proxy with a budget too small for the bodies")
	retryAfter := fs.Duration("retry-after", transport.DefaultRetryAfter, "Retry-After of the proxies' 429")
	out := fs.String("out", "", "keep the results (JSON) and kubeconfigs in this folder; default: a temporary one, removed")
	markdown := fs.Bool("markdown", false, "print the tables as Markdown")
	verbose := fs.Bool("v", false, "log the servers' messages to stderr")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	base, err := lf.options("", c)
	if err != nil {
		return fail(c, "", err)
	}
	upOpts, err := gf.options()
	if err != nil {
		return fail(c, "", err)
	}
	if small <= 0 {
		return fail(c, "", usageErr("-small-budget must be positive (<= 0 disables buffering), not %d", small))
	}
	if *retryAfter <= 0 {
		return fail(c, "", usageErr("-retry-after must be positive, not %v", *retryAfter))
	}
	dir, cleanup, err := outputDir(*out)
	if err != nil {
		return fail(c, "", usageError{err})
	}
	defer cleanup()
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = c.logger()
	}

	fix := transport.DefaultConfig()
	fix.RetryAfter = *retryAfter
	tiny := transport.Config{TotalBytes: int64(small), PerRequestBytes: int64(small), RetryAfter: *retryAfter}
	adaptive := fix
	adaptive.Adaptive = true
	fw := fiveWay{chance: upOpts.GoawayChance}
	stages := []struct {
		stage
		into *outcome
	}{
		{stage{name: "Direct K8s", file: "direct", noRetry: true}, &fw.direct},
		{stage{name: "Proxy (no fix)", file: "proxy-no-fix", proxy: &transport.Config{Disabled: true}, noFix: true, noRetry: true}, &fw.noFix},
		{stage{name: "Proxy (with fix)", file: "proxy-fix", proxy: &fix, noRetry: true}, &fw.fix},
		{stage{name: fmt.Sprintf("Proxy (fix, %s budget)", report.Bytes(int64(small))), file: "proxy-fix-small-budget", proxy: &tiny}, &fw.small},
		{stage{name: "Proxy (adaptive)", file: "proxy-adaptive", proxy: &adaptive}, &fw.adaptive},
	}

	up, err := c.upstream(upOpts, logger)
	if err != nil {
		return fail(c, "", err)
	}
	defer shutdown(up.Shutdown) // its error does not change what the run showed
	fmt.Fprintf(c.stdout, "Embedded API server %s with %s; each configuration: %d workers x %d operations "+
		"(create and delete a ConfigMap of %s), client-go QPS %g.\n\n",
		up.Spec().Server, &gf, base.Workers, base.OpsPerWorker, report.Bytes(int64(base.BodySize)), lf.qps)
	upPath := filepath.Join(dir, "upstream.kubeconfig")
	if err := kubeconfig.Write(upPath, up.Spec()); err != nil {
		return fail(c, "", err)
	}
	var results []*load.Result
	var proxies []report.ProxyRow
	for _, s := range stages {
		if *s.into, err = runStage(ctx, s.stage, base, upPath, dir, logger); err != nil {
			return fail(c, "", err)
		}
		results = append(results, s.into.res)
		if st := s.into.stats; st != nil {
			a := s.into.attempts
			proxies = append(proxies, report.ProxyRow{Name: s.name, Stats: *st, Replayed: a.Replayed, MostAttempts: a.Most})
		}
	}
	_ = report.Table(c.stdout, results, *markdown)
	fmt.Fprintln(c.stdout)
	_ = report.Proxies(c.stdout, proxies, *markdown)
	fmt.Fprintln(c.stdout)
	floor := transport.New(nil, adaptive).Config().AdaptiveFloorBytes // the default filled in
	pass := fw.findings(c.stdout, int64(small), floor, *retryAfter)
	if *out != "" {
		fmt.Fprintf(c.stdout, "\nResults and kubeconfigs are in %s.\n", dir)
	}
	if !pass {
		return exitFail
	}
	return exitOK
}

// runStage runs the load of one configuration, through a proxy of its own
// when it has one, and saves the result as DIR/FILE.json and the proxy's
// transport Stats as DIR/FILE.stats.json.
func runStage(ctx context.Context, s stage, base load.Options, upPath, dir string, logger *slog.Logger) (outcome, error) {
	opts := base
	opts.Name, opts.NoRetry = s.name, s.noRetry
	opts.Namespace = "teebody-" + s.file
	path := upPath
	var p *proxy.Server
	if s.proxy != nil {
		up, err := kubeconfig.Load(upPath, "")
		if err != nil {
			return outcome{}, err
		}
		p, err = proxy.Start(proxy.Options{Upstream: up.Config, NoFix: s.noFix, Transport: *s.proxy, Logger: logger}, "", serve.Pair{})
		if err != nil {
			return outcome{}, err
		}
		defer shutdown(p.Shutdown)
		path = filepath.Join(dir, s.file+".kubeconfig")
		if err := kubeconfig.Write(path, p.Spec()); err != nil {
			return outcome{}, err
		}
	}
	target, err := kubeconfig.Load(path, "")
	if err != nil {
		return outcome{}, err
	}
	res, err := load.Run(ctx, target, opts)
	if err != nil {
		return outcome{}, err
	}
	o := outcome{res: res}
	if p != nil {
		o.attempts, _ = p.Attempts()
		if st, ok := p.Stats(); ok {
			o.stats = &st
			if err := load.WriteJSON(filepath.Join(dir, s.file+".stats.json"), st); err != nil {
				return outcome{}, err
			}
		}
	}
	return o, res.WriteFile(filepath.Join(dir, s.file+".json"))
}

// outputDir is dir, created if need be, or a new temporary folder that
// cleanup removes.
func outputDir(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, os.MkdirAll(dir, 0o755)
	}
	tmp, err := os.MkdirTemp("", "teebody-demo-")
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { _ = os.RemoveAll(tmp) }, nil
}
