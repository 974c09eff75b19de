package report

import (
	"fmt"
	"io"

	"github.com/teebody/teebody/pkg/transport"
)

// ProxyRow is what one proxy's transport did during a run.
type ProxyRow struct {
	Name  string
	Stats transport.Stats
	// From the transport.Report of each request: the requests whose body
	// was sent more than once, and the most times one body was sent.
	Replayed     int64
	MostAttempts int
}

// Proxies writes one row per proxy: requests buffered (of them, those kept
// up to the adaptive floor because their upstream was quiet), requests
// passed through because their upstream was quiet (adaptive mode), replays
// served, requests that needed a replay and the most attempts of one, 429s
// written, and the most bytes held at once; as a Markdown table when
// markdown is set, else in columns aligned with spaces.
func Proxies(w io.Writer, proxies []ProxyRow, markdown bool) error {
	rows := make([][]string, len(proxies))
	for i, p := range proxies {
		s := p.Stats
		rows[i] = []string{p.Name, fmt.Sprint(s.Buffered), fmt.Sprint(s.BufferedQuiet), fmt.Sprint(s.PassedThrough.Quiet), fmt.Sprint(s.ReplaysServed),
			fmt.Sprint(p.Replayed), fmt.Sprint(p.MostAttempts), fmt.Sprint(s.RetryLaterWritten), Bytes(s.PeakBytesHeld)}
	}
	return write(w, []string{"Proxy", "Buffered", "of them quiet", "Unbuffered (quiet)", "Replays", "Needed a replay", "Most attempts", "429s",
		"Peak held"}, rows, markdown)
}
