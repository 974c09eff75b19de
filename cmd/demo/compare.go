package main

import (
	"strings"

	"github.com/teebody/teebody/cmd/demo/internal/load"
	"github.com/teebody/teebody/cmd/demo/internal/report"
)

const compareSynopsis = "demo compare -files a.json,b.json[,...] [-markdown] [-summary]"

// runCompare is "demo compare": the table of saved results, in file order.
func runCompare(args []string, c *cli) int {
	fs := newFlags("compare", compareSynopsis, c)
	files := fs.String("files", "", "comma-separated result files written by demo load -output (required)")
	markdown := fs.Bool("markdown", false, "print a Markdown table")
	summary := fs.Bool("summary", false, "also print latencies against the first file, and a line per result")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	var results []*load.Result
	for f := range strings.SplitSeq(*files, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		r, err := load.ReadFile(f)
		if err != nil {
			return fail(c, "compare", usageError{err})
		}
		results = append(results, r)
	}
	if len(results) == 0 {
		return fail(c, "compare", usageErr("-files names no file"))
	}
	_ = report.Table(c.stdout, results, *markdown)
	if *summary {
		c.stdout.Write([]byte("\n"))
		_ = report.Latency(c.stdout, results)
		_ = report.Summary(c.stdout, results)
	}
	return exitOK
}
