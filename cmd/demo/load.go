package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/load"
	"github.com/teebody/teebody/cmd/demo/internal/report"
)

// loadFlags are the knobs of one load run, shared by "demo load" and the
// five-way run.
type loadFlags struct {
	workers, ops, burst int
	bodySize            sizeFlag
	qps                 float64
	quiet               bool
}

func (f *loadFlags) register(fs *flag.FlagSet, qps float64) {
	f.bodySize = 1024
	fs.IntVar(&f.workers, "workers", 10, "concurrent workers")
	fs.IntVar(&f.ops, "ops", 100, "operations per worker (one operation: create a ConfigMap, then delete it)")
	fs.Var(&f.bodySize, "body-size", "bytes of data per ConfigMap (1024, 4KiB, ...)")
	fs.Float64Var(&f.qps, "qps", qps, "client-go's rate limit in requests per second; < 0: none")
	fs.IntVar(&f.burst, "burst", 0, "client-go's burst; 0: twice -qps")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
}

func (f *loadFlags) options(name string, c *cli) (load.Options, error) {
	if f.qps == 0 {
		return load.Options{}, usageErr("-qps must not be 0 (< 0 means no limit)")
	}
	burst := f.burst
	if burst == 0 {
		burst = max(1, int(2*f.qps))
	}
	opts := load.Options{
		Name:         name,
		Workers:      f.workers,
		OpsPerWorker: f.ops,
		BodySize:     int(f.bodySize),
		QPS:          float32(f.qps),
		Burst:        burst,
	}
	if err := opts.Validate(); err != nil {
		return load.Options{}, usageError{err}
	}
	if !f.quiet {
		opts.Progress, opts.Terminal = c.stderr, c.terminal
	}
	return opts, nil
}

const loadSynopsis = "demo load -kubeconfig F [-context C] [-namespace N] [-workers 10] [-ops 100] [-body-size 1024] " +
	"[-qps 100] [-burst 200] [-no-retry] [-name S] [-output F.json] [-quiet]"

// runLoad is "demo load": exit 1 when any operation failed.
func runLoad(ctx context.Context, args []string, c *cli) int {
	fs := newFlags("load", loadSynopsis, c)
	var lf loadFlags
	lf.register(fs, 100)
	path := fs.String("kubeconfig", "", "kubeconfig file; empty: $KUBECONFIG or ~/.kube/config")
	kctx := fs.String("context", "", "kubeconfig context; empty: the current one")
	ns := fs.String("namespace", "", "namespace for the ConfigMaps, created when missing; empty: the context's, else "+load.DefaultNamespace)
	noRetry := fs.Bool("no-retry", false, "clear GetBody on each request, so a GOAWAY cannot be retried (as through a proxy)")
	name := fs.String("name", "load", "the result's name")
	output := fs.String("output", "", "write the result as JSON to this file")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	opts, err := lf.options(*name, c)
	if err != nil {
		return fail(c, "load", err)
	}
	opts.Namespace, opts.NoRetry = *ns, *noRetry
	target, err := kubeconfig.Load(*path, *kctx)
	if err != nil {
		return fail(c, "load", usageError{err})
	}
	res, err := load.Run(ctx, target, opts)
	if res == nil {
		return fail(c, "load", err)
	}
	if *output != "" {
		if werr := res.WriteFile(*output); werr != nil {
			return fail(c, "load", werr)
		}
	}
	_ = report.Table(c.stdout, []*load.Result{res}, false)
	for _, s := range res.SampleErrors {
		fmt.Fprintf(c.stdout, "  error: %s\n", s)
	}
	if err != nil { // stopped early by a signal: the partial result is shown
		return fail(c, "load", err)
	}
	if res.FailedOperations > 0 {
		return exitFail
	}
	return exitOK
}
