package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/teebody/teebody/pkg/transport"
)

// ProxyRow is what one proxy's transport did during a run.
type ProxyRow struct {
	Name  string
	Stats transport.Stats
}

var proxyHeader = []string{"Proxy", "Buffered", "Unbuffered (quiet)", "Replays", "429s", "Peak held"}

func proxyCells(p ProxyRow) []string {
	s := p.Stats
	return []string{
		p.Name,
		fmt.Sprint(s.Buffered),
		fmt.Sprint(s.PassedThrough.Quiet),
		fmt.Sprint(s.ReplaysServed),
		fmt.Sprint(s.RetryLaterWritten),
		Bytes(s.PeakBytesHeld),
	}
}

// Proxies writes one row per proxy: requests buffered and passed through
// because their upstream was quiet (adaptive mode), replays served, 429s
// written, and the most bytes held at once; as a Markdown table when
// markdown is set, else in columns aligned with spaces.
func Proxies(w io.Writer, rows []ProxyRow, markdown bool) error {
	if markdown {
		var b strings.Builder
		b.WriteString("| " + strings.Join(proxyHeader, " | ") + " |\n")
		b.WriteString("|---|" + strings.Repeat("---:|", len(proxyHeader)-1) + "\n")
		for _, r := range rows {
			b.WriteString("| " + strings.Join(proxyCells(r), " | ") + " |\n")
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(proxyHeader, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(proxyCells(r), "\t"))
	}
	return tw.Flush()
}

// Bytes is n in the largest binary unit that keeps one decimal: 0B, 512B,
// 40.0KiB, 1.5MiB.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1fGiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
