package main

import (
	"context"
	"flag"
	"slices"
	"time"

	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/proxy"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
	"github.com/teebody/teebody/pkg/transport"
)

const proxySynopsis = "demo proxy -kubeconfig UPSTREAM [-context C] [-listen 127.0.0.1:0] -write-kubeconfig F [-no-fix] [-chain client-go|teleport] " +
	"[-total-bytes SIZE] [-per-request-bytes SIZE] [-adaptive] [-retry-after 1s] [-tls-cert F -tls-key F]"

// transportFlags are the sizes and mode of the teebody transport: flags over
// the environment (transport.ConfigFromEnv) over the defaults.
type transportFlags struct {
	total, perRequest sizeFlag
	adaptive          bool
	retryAfter        time.Duration
}

func (f *transportFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.total, "total-bytes", "bytes held for replay by all requests (512MiB, 1G, ...); <= 0 disables; default $"+
		transport.EnvPrefix+"TOTAL, else 500MiB")
	fs.Var(&f.perRequest, "per-request-bytes", "bytes held for one request's replay; default $"+
		transport.EnvPrefix+"PER_REQ, else 50MiB")
	fs.BoolVar(&f.adaptive, "adaptive", false, "buffer only for an upstream that sent GOAWAY in the last hour; default $"+
		transport.EnvPrefix+"ADAPTIVE, else false")
	fs.DurationVar(&f.retryAfter, "retry-after", transport.DefaultRetryAfter, "Retry-After of the 429 for a body that cannot be replayed")
}

// config is the transport config, with the flags set on fs's command line
// over the environment; a bad environment value is a usage error naming
// the variable.
func (f *transportFlags) config(fs *flag.FlagSet) (transport.Config, error) {
	cfg, err := transport.ConfigFromEnv()
	if err != nil {
		return transport.Config{}, usageError{err}
	}
	set := setFlags(fs)
	// A size <= 0 disables buffering, as in the environment.
	if set["total-bytes"] {
		cfg.TotalBytes = max(int64(f.total), 0)
		cfg.Disabled = f.total <= 0
	}
	if set["per-request-bytes"] {
		cfg.PerRequestBytes = max(int64(f.perRequest), 0)
		cfg.Disabled = cfg.Disabled || f.perRequest <= 0
	}
	if set["adaptive"] {
		cfg.Adaptive = f.adaptive
	}
	if f.retryAfter <= 0 {
		return transport.Config{}, usageErr("-retry-after must be positive, not %v", f.retryAfter)
	}
	cfg.RetryAfter = f.retryAfter
	return cfg, nil
}

// runProxy is "demo proxy": serves until SIGINT or SIGTERM.
func runProxy(ctx context.Context, args []string, c *cli) int {
	fs := newFlags("proxy", proxySynopsis, c)
	path := fs.String("kubeconfig", "", "the upstream's kubeconfig; empty: $KUBECONFIG or ~/.kube/config")
	kctx := fs.String("context", "", "the upstream's kubeconfig context; empty: the current one")
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	out := fs.String("write-kubeconfig", "", "write the kubeconfig for the proxy's clients here, once it listens (required)")
	noFix := fs.Bool("no-fix", false, "forward without package transport, for comparison")
	chain := fs.String("chain", string(proxy.ChainClientGo), "the upstream transport: client-go (client-go's, the teebody transport on top) or teleport "+
		"(Teleport's agent's: x/net's http2.ConfigureTransport, SetTransportDefaults, the teebody transport innermost, client-go's wrappers "+
		"impersonating user "+proxy.ImpersonateUser+" in group "+proxy.ImpersonateGroup+", an instrumentation wrapper)")
	certFile := fs.String("tls-cert", "", "serving certificate (PEM); default: a generated self-signed one")
	keyFile := fs.String("tls-key", "", "serving key (PEM), with -tls-cert")
	var tf transportFlags
	tf.register(fs)
	if code := parse(fs, args); code >= 0 {
		return code
	}
	if *out == "" {
		return fail(c, "proxy", usageErr("-write-kubeconfig is required"))
	}
	if (*certFile == "") != (*keyFile == "") {
		return fail(c, "proxy", usageErr("-tls-cert and -tls-key go together"))
	}
	cfg, err := tf.config(fs)
	if err != nil {
		return fail(c, "proxy", err)
	}
	up, err := kubeconfig.Load(*path, *kctx)
	if err != nil {
		return fail(c, "proxy", usageError{err})
	}
	var cert serve.Pair
	if *certFile != "" {
		if cert, err = serve.Load(*certFile, *keyFile); err != nil {
			return fail(c, "proxy", usageError{err})
		}
	}
	log := c.logger()
	if !slices.Contains(proxy.Chains, proxy.Chain(*chain)) {
		return fail(c, "proxy", usageErr("-chain must be one of %v, not %q", proxy.Chains, *chain))
	}
	opts := proxy.Options{Upstream: up.Config, NoFix: *noFix, Transport: cfg, Chain: proxy.Chain(*chain), Logger: log}
	p, err := proxy.Start(opts, *listen, cert)
	if err != nil {
		return fail(c, "proxy", usageError{err})
	}
	err = serveUntilStopped(ctx, c, log, "proxy", p, *out, func() {
		if opts.NoFix {
			log.Info("proxy listening, without the fix", "url", p.Spec().Server, "upstream", opts.Upstream.Host, "kubeconfig", *out,
				"chain", opts.Chain)
			return
		}
		applied := transport.New(nil, cfg).Config() // the defaults filled in
		log.Info("proxy listening", "url", p.Spec().Server, "upstream", opts.Upstream.Host, "kubeconfig", *out,
			"disabled", applied.Disabled, "total_bytes", applied.TotalBytes, "per_request_bytes", applied.PerRequestBytes,
			"adaptive", applied.Adaptive, "retry_after", applied.RetryAfter, "chain", opts.Chain)
	})
	if st, ok := p.Stats(); ok {
		a, _ := p.Attempts()
		log.Info("proxy stopped", "requests", st.Requests, "buffered", st.Buffered, "quiet", st.PassedThrough.Quiet,
			"adaptive_traces", st.AdaptiveTraces, "replays_served", st.ReplaysServed, "replayed_requests", a.Replayed,
			"most_attempts", a.Most, "retry_later_written", st.RetryLaterWritten, "peak_bytes_held", st.PeakBytesHeld,
			"bytes_held", st.BytesHeld)
	}
	if err != nil {
		return fail(c, "proxy", err)
	}
	return exitOK
}
