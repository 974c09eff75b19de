package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/load"
	"github.com/teebody/teebody/cmd/demo/internal/proxy"
	"github.com/teebody/teebody/cmd/demo/internal/report"
	"github.com/teebody/teebody/cmd/demo/internal/upstream"
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

const demoSynopsis = "demo [-workers 10] [-ops 100] [-body-size 1024] [-goaway-chance 0.02] [-qps 5000] [-burst 0] " +
	"[-small-budget 256] [-retry-after 1s] [-out DIR] [-markdown] [-quiet] [-v]"

// stage is one of the five configurations.
type stage struct {
	name    string
	file    string            // base name of its files in the output folder
	proxy   *transport.Config // nil: direct; else the proxy's transport config
	noFix   bool              // the proxy forwards without the fix
	noRetry bool              // the client clears GetBody
}

// outcome is a stage's result, with the proxy's transport stats.
type outcome struct {
	res   *load.Result
	stats *transport.Stats // nil without the fix
}

// runDemo is "demo": the five-way run; exit 1 if a fixed proxy let a
// failure through.
func runDemo(ctx context.Context, args []string, c *cli) int {
	fs := newFlags("", demoSynopsis, c)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\nusage: %s\n\nThe same load against an embedded API server with the API server's GOAWAY filter: directly,\n"+
			"through a reverse proxy without the fix, with it, with it and a budget too small for the bodies, and with it in\n"+
			"adaptive mode (buffering only once the upstream sent GOAWAY).\n\nflags:\n", usage, demoSynopsis)
		fs.PrintDefaults()
	}
	var lf loadFlags
	lf.register(fs, demoQPS)
	chance := unitFlag(demoChance)
	fs.Var(&chance, "goaway-chance", "chance that the embedded API server answers a request with a GOAWAY")
	small := sizeFlag{n: demoSmallBudget}
	fs.Var(&small, "small-budget", "the budget of the fourth configuration, too small for the bodies")
	retryAfter := fs.Duration("retry-after", transport.DefaultRetryAfter, "Retry-After of the proxies' 429")
	out := fs.String("out", "", "keep the results (JSON) and kubeconfigs in this folder; default: a temporary one, removed")
	markdown := fs.Bool("markdown", false, "print the table as Markdown")
	verbose := fs.Bool("v", false, "log the servers' messages to stderr")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	base, err := lf.options("", c)
	if err != nil {
		return fail(c, "", err)
	}
	if small.n <= 0 {
		return fail(c, "", usageErr("-small-budget must be positive (<= 0 disables buffering), not %d", small.n))
	}
	if *retryAfter <= 0 {
		return fail(c, "", usageErr("-retry-after must be positive, not %v", *retryAfter))
	}
	dir, cleanup, err := outputDir(*out)
	if err != nil {
		return fail(c, "", usageErr("%v", err))
	}
	defer cleanup()
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = c.logger()
	}

	fix := transport.DefaultConfig()
	fix.RetryAfter = *retryAfter
	tiny := transport.Config{TotalBytes: small.n, PerRequestBytes: small.n, RetryAfter: *retryAfter}
	adaptive := fix
	adaptive.Adaptive = true
	stages := []stage{
		{name: "Direct K8s", file: "direct", noRetry: true},
		{name: "Proxy (no fix)", file: "proxy-no-fix", proxy: &transport.Config{}, noFix: true, noRetry: true},
		{name: "Proxy (with fix)", file: "proxy-fix", proxy: &fix, noRetry: true},
		{name: fmt.Sprintf("Proxy (fix, %s budget)", bytesText(small.n)), file: "proxy-fix-small-budget", proxy: &tiny},
		{name: "Proxy (adaptive)", file: "proxy-adaptive", proxy: &adaptive},
	}

	up, err := upstream.Start(upstream.Options{GoawayChance: float64(chance), Logger: logger})
	if err != nil {
		return fail(c, "", err)
	}
	defer shutdown(up.Shutdown)
	fmt.Fprintf(c.stdout, "Embedded API server %s with --goaway-chance %g; each configuration: %d workers x %d operations "+
		"(create and delete a ConfigMap of %s), client-go QPS %g.\n\n",
		up.Spec().Server, float64(chance), base.Workers, base.OpsPerWorker, bytesText(int64(base.BodySize)), lf.qps)
	upPath := filepath.Join(dir, "upstream.kubeconfig")
	if err := kubeconfig.Write(upPath, up.Spec()); err != nil {
		return fail(c, "", err)
	}
	var outcomes []outcome
	for _, s := range stages {
		o, err := runStage(ctx, s, base, upPath, dir, logger)
		if err != nil {
			return fail(c, "", err)
		}
		outcomes = append(outcomes, o)
	}

	results := make([]*load.Result, len(outcomes))
	for i, o := range outcomes {
		results[i] = o.res
	}
	if *markdown {
		_ = report.Markdown(c.stdout, results)
	} else {
		_ = report.Table(c.stdout, results)
	}
	fmt.Fprintln(c.stdout)
	_ = report.Latency(c.stdout, results)
	fmt.Fprintln(c.stdout)
	var proxies []report.ProxyRow
	for _, o := range outcomes {
		if o.stats != nil {
			proxies = append(proxies, report.ProxyRow{Name: o.res.Name, Stats: *o.stats})
		}
	}
	_ = report.Proxies(c.stdout, proxies, *markdown)
	fmt.Fprintln(c.stdout)
	pass := findings(c.stdout, outcomes, small.n, *retryAfter)
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
		p, err = proxy.Start(proxy.ServerOptions{Options: proxy.Options{
			Upstream: up.Config, NoFix: s.noFix, Transport: *s.proxy, Logger: logger,
		}})
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
		if st, ok := p.Stats(); ok {
			o.stats = &st
			if err := writeJSON(filepath.Join(dir, s.file+".stats.json"), st); err != nil {
				return outcome{}, err
			}
		}
	}
	return o, res.WriteFile(filepath.Join(dir, s.file+".json"))
}

// writeJSON saves v as indented JSON.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
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

// shutdown stops a server within shutdownTimeout; its error was already
// logged, and does not change what the run showed.
func shutdown(f func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	_ = f(ctx)
}

// bytesText is n in the largest binary unit that divides it: 256B, 1KiB.
func bytesText(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.suffix)
		}
	}
	return fmt.Sprintf("%dB", n)
}
