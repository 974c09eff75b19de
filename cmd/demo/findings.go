package main

import (
	"fmt"
	"io"
	"time"

	"github.com/teebody/teebody/cmd/demo/internal/report"
	"github.com/teebody/teebody/pkg/transport"
)

// findings writes what the five configurations show, and reports whether
// the fixed proxies let no failure through.
func (fw *fiveWay) findings(w io.Writer, smallBudget, adaptiveFloor int64, retryAfter time.Duration) bool {
	direct, noFix, fix, small, adaptive := fw.direct.res, fw.noFix.res, fw.fix.res, fw.small.res, fw.adaptive.res
	fmt.Fprintln(w, "Findings:")
	fmt.Fprintf(w, "- Direct, with GetBody cleared (a proxy has none): %d of %d operations failed on a GOAWAY.\n",
		direct.GoawayErrors, direct.TotalOperations)
	fmt.Fprintf(w, "- Through the proxy without the fix: %d of %d failed (%.2f%%), %d of them on a GOAWAY.\n",
		noFix.FailedOperations, noFix.TotalOperations, noFix.ErrorRate, noFix.GoawayErrors)
	if fw.chance > 0 {
		fmt.Fprintln(w, "  (How many writes a GOAWAY fails depends on how many are in flight on its connection: on loopback"+
			" the workers keep many, and each GOAWAY catches several. docs/E2E.md records a real API server's rates.)")
	}
	if noFix.GoawayErrors == 0 {
		fmt.Fprintln(w, "  No GOAWAY failure showed without the fix this time; raise -ops or -goaway-chance, or set -goaway-after, to see one.")
	}
	line := fmt.Sprintf("- Through the proxy with the fix: %d failed", fix.FailedOperations)
	if st := fw.fix.stats; st != nil {
		// From each request's Report: Stats.ReplaysServed counts GetBody's
		// calls, which outnumber the bodies sent again.
		if a := fw.fix.attempts; a.Replayed > 0 {
			line += fmt.Sprintf("; it replayed the bodies of %d requests after GOAWAYs, in at most %d attempts for one", a.Replayed, a.Most)
		} else {
			line += "; no request needed a replay"
		}
		line += fmt.Sprintf(", holding at most %s at once", report.Bytes(st.PeakBytesHeld))
	}
	fmt.Fprintln(w, line+".")
	line = fmt.Sprintf("- With a budget of %s, too small for the bodies: %d failed", report.Bytes(smallBudget), small.FailedOperations)
	if st := fw.small.stats; st != nil {
		line += fmt.Sprintf("; the proxy answered 429 (Retry-After %s) %d times and client-go sent those requests again",
			retryAfter, st.RetryLaterWritten)
	}
	fmt.Fprintln(w, line+".")
	line = fmt.Sprintf("- In adaptive mode, with client-go's retries: %d failed", adaptive.FailedOperations)
	if st := fw.adaptive.stats; st != nil {
		kept := fmt.Sprintf("kept %d bodies of at most its floor of %s and passed %d larger ones through unbuffered",
			st.BufferedQuiet, report.Bytes(adaptiveFloor), st.PassedThrough.Quiet)
		if st.AdaptiveTraces == 0 {
			line += "; it saw no GOAWAY, so it " + kept
		} else {
			line += fmt.Sprintf("; until its upstream's first GOAWAY it %s, then saw %d traces of GOAWAY and buffered as"+
				" always-on", kept, st.AdaptiveTraces)
		}
		line += fmt.Sprintf("; it answered 429 %d times and held at most %s at once (always-on: %s)",
			st.RetryLaterWritten, report.Bytes(st.PeakBytesHeld), peakText(fw.fix.stats))
	}
	fmt.Fprintln(w, line+".")
	fmt.Fprintln(w, "- Latency: each configuration ran once, one after the other, on a machine shared with whatever else"+
		" runs, so the percentiles above differ between runs by more than the fix costs (a proxy that buffers can"+
		" come out faster than one that does not). What the fix costs is measured by make bench, with the proxy in a"+
		" process of its own and the configurations in interleaved rounds with confidence intervals:"+
		" docs/BENCHMARKS.md, \"Headline: the proxy in a process of its own\".")
	if n := fix.FailedOperations + small.FailedOperations + adaptive.FailedOperations; n > 0 {
		fmt.Fprintf(w, "FAIL: the fixed proxy let %d failures through.\n", n)
		return false
	}
	fmt.Fprintln(w, "PASS: the fixed proxy let no failure through.")
	return true
}

// peakText is the peak bytes held in st, or "?" without stats.
func peakText(st *transport.Stats) string {
	if st == nil {
		return "?"
	}
	return report.Bytes(st.PeakBytesHeld)
}
