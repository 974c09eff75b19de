// Command demo shows the HTTP/2 GOAWAY failure of reverse proxies in front
// of a Kubernetes API server, and its fix by package transport, side by side
// (run it without arguments); its subcommands run the same pieces against a
// real cluster. See usage below.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
)

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1 // the run failed: operations failed, a server was unreachable
	exitUsage = 2 // the command line or environment is wrong
)

const usage = `usage:
  demo [flags]            the five-way run against an embedded API server (flags: demo -h)
  demo load [flags]       create and delete ConfigMaps through client-go, count the failures
  demo proxy [flags]      the fix in front of a cluster: a reverse proxy through package transport
  demo upstream [flags]   the embedded API server on its own, with its GOAWAY sources
  demo compare [flags]    tables from saved load results
Run "demo COMMAND -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &cli{stdout: os.Stdout, stderr: os.Stderr, terminal: isTerminal(os.Stderr), upstream: fakeapi.Start})
	stop()
	os.Exit(code)
}

// cli is what a command writes to, and the hooks tests use.
type cli struct {
	stdout, stderr io.Writer
	terminal       bool // stderr is a terminal: progress rewrites one line
	// ready, when set, is called with the kubeconfig path once a server
	// ("demo proxy", "demo upstream") wrote it, i.e. once it is listening.
	ready func(path string)
	// upstream starts the embedded API server ("demo", "demo upstream"):
	// fakeapi.Start, or a stand-in of a test.
	upstream func(opts fakeapi.Options, logger *slog.Logger) (serve.Running, error)
}

// run runs the command in args and returns its exit status. ctx ending
// (SIGINT, SIGTERM) stops servers gracefully and load runs early.
func run(ctx context.Context, args []string, c *cli) int {
	if len(args) == 0 {
		return runDemo(ctx, nil, c)
	}
	switch args[0] {
	case "load":
		return runLoad(ctx, args[1:], c)
	case "proxy":
		return runProxy(ctx, args[1:], c)
	case "upstream":
		return runUpstream(ctx, args[1:], c)
	case "compare":
		return runCompare(args[1:], c)
	case "help":
		fmt.Fprint(c.stdout, usage)
		return exitOK
	}
	if strings.HasPrefix(args[0], "-") {
		return runDemo(ctx, args, c)
	}
	fmt.Fprintf(c.stderr, "demo: unknown command %q\n%s", args[0], usage)
	return exitUsage
}

func (c *cli) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(c.stderr, nil))
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
