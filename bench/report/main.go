// Command report turns the output of the bench suite (go test -bench, any
// number of rounds) and benchstat's comparisons into docs/BENCHMARKS.md: the
// medians per transport, the ratios against plain and against
// read-everything-first, the goals of issue 5 marked met or missed, the
// exact command and the machine.
//
// Usage:
//
//	go run ./bench/report -raw raw.txt -vs-plain a.txt -vs-readall b.txt \
//		-command 'bash bench/run.sh' -out docs/BENCHMARKS.md
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

func main() {
	var o options
	flag.StringVar(&o.raw, "raw", "", "benchmark output (required)")
	flag.StringVar(&o.vsPlain, "vs-plain", "", "benchstat output, plain as the base column")
	flag.StringVar(&o.vsReadAll, "vs-readall", "", "benchstat output, readall as the base column")
	flag.StringVar(&o.notes, "notes", "", "markdown appended as the analysis")
	flag.StringVar(&o.command, "command", "bash bench/run.sh", "the command that made the figures")
	flag.StringVar(&o.benchCommand, "bench-command", "", "the go test commands run.sh ran")
	flag.StringVar(&o.commit, "commit", "", "the commit measured")
	flag.StringVar(&o.date, "date", "", "when the run started")
	flag.StringVar(&o.elapsed, "elapsed", "", "how long the run took")
	flag.StringVar(&o.loadBefore, "load-before", "", "/proc/loadavg before the run")
	flag.StringVar(&o.loadAfter, "load-after", "", "/proc/loadavg after the run")
	flag.StringVar(&o.out, "out", "", "output file; standard output if empty")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

type options struct {
	raw, vsPlain, vsReadAll, notes      string
	command, benchCommand, commit, date string
	elapsed, loadBefore, loadAfter, out string
	goVersion, cpuModel, rawText        string
	cores                               int
}

var errNoRaw = errors.New("report: -raw is required")

func run(o options) error {
	if o.raw == "" {
		return errNoRaw
	}
	raw, err := os.ReadFile(o.raw)
	if err != nil {
		return err
	}
	o.rawText = string(raw)
	set, err := parse(strings.NewReader(o.rawText))
	if err != nil {
		return fmt.Errorf("report: %s: %w", o.raw, err)
	}
	o.goVersion = runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	o.cpuModel, o.cores = cpuInfo()
	var w io.Writer = os.Stdout
	if o.out != "" {
		out, err := os.Create(o.out)
		if err != nil {
			return err
		}
		defer out.Close()
		w = out
	}
	bw := bufio.NewWriter(w)
	if err := write(bw, o, set); err != nil {
		return err
	}
	return bw.Flush()
}

// cpuInfo returns the CPU model from /proc/cpuinfo and the number of
// logical CPUs.
func cpuInfo() (string, int) {
	model := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return model, runtime.NumCPU()
}

// readOptional returns the content of a file, or "" if the name is empty.
func readOptional(name string) (string, error) {
	if name == "" {
		return "", nil
	}
	b, err := os.ReadFile(name)
	return string(b), err
}
