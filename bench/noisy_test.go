package bench

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/noisytest"
	"github.com/teebody/teebody/pkg/transport"
)

// BenchmarkNoisy measures what slow, stalled and hostile clients cost the
// others: the bytes the transport holds for them, and how many small writes
// behind them lose their replay and are answered 429 while the upstream
// sends GOAWAY after 5% of its responses (as kube-apiserver's
// --goaway-chance=0.05 would). HTTP/1.1 clients, httputil.ReverseProxy over
// transport.New with ErrorHandler, a TLS HTTP/2 upstream, all on loopback.
// Each scenario runs once whatever b.N is (run it with -benchtime 1x); with
// NOISY_MD set, it writes the figures as a markdown section to that file.
func BenchmarkNoisy(b *testing.B) {
	var rows []noisyRow
	b.Run("scenario=slow-upstream", func(b *testing.B) { rows = append(rows, noisySlowUpstream(b)...) })
	b.Run("scenario=announcers", func(b *testing.B) { rows = append(rows, noisyAnnouncers(b)...) })
	b.Run("scenario=stalled", func(b *testing.B) { rows = append(rows, noisyStalled(b)...) })
	if path := os.Getenv("NOISY_MD"); path != "" && len(rows) > 0 {
		if err := os.WriteFile(path, noisyMarkdown(rows), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// noisyRow is one figure of the noisy-neighbours section: id keys the
// recorded before figure and the goal.
type noisyRow struct {
	id, scenario, measure, now string
}

// Headers by which the clients tell the noisy upstream what to do with a body.
const (
	hdrNoisy = "X-Noisy" // "slow": read 1 KiB, then wait for the release; else read it all
)

// noisyStack is a noisytest.Stack whose upstream reads a "slow" body 1 KiB,
// then once released, and counts the bodies that arrived.
type noisyStack struct {
	*noisytest.Stack
	release chan struct{} // closed by letGo, to let the slow uploads go on
	letGo   func()
	arrived atomic.Int64 // bodies of which the upstream got what it waits for
	want    int64        // bytes of a stalled body the upstream must see before it counts as arrived
}

func newNoisyStack(b *testing.B, cfg transport.Config, arriveAt int64) *noisyStack {
	s := &noisyStack{release: make(chan struct{}), want: arriveAt}
	s.Stack = noisytest.New(b, noisytest.Options{Config: cfg, Upstream: http.HandlerFunc(s.serve)})
	s.letGo = sync.OnceFunc(func() { close(s.release) })
	b.Cleanup(s.letGo) // in case the scenario failed before it let them go
	return s
}

// serve is the upstream: a "slow" body is read 1 KiB, then once released;
// any other is read whole, and once want bytes of it are in it counts as
// arrived. It answers 200 when the body's length matches its Content-Length.
func (s *noisyStack) serve(w http.ResponseWriter, r *http.Request) {
	var n int64
	if r.Header.Get(hdrNoisy) == "slow" {
		m, _ := io.ReadFull(r.Body, make([]byte, 1<<10))
		n = int64(m)
		s.arrived.Add(1)
		select {
		case <-s.release:
		case <-r.Context().Done():
			return
		}
	}
	noisytest.Consume(w, r, n, s.want, func() { s.arrived.Add(1) })
}

// waitArrived waits until n bodies have arrived as serve counts them, then
// until the bytes held stop moving (50 samples 10 ms apart alike, at most
// 20 s), and returns what is held then.
func (s *noisyStack) waitArrived(b *testing.B, n int64) int64 {
	deadline := time.Now().Add(60 * time.Second)
	for s.arrived.Load() < n {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d bodies arrived; stats %+v", s.arrived.Load(), n, s.Transport.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	held, same := s.Transport.Stats().BytesHeld, 0
	for settle := time.Now().Add(20 * time.Second); same < 50 && time.Now().Before(settle); {
		time.Sleep(10 * time.Millisecond)
		if now := s.Transport.Stats().BytesHeld; now == held {
			same++
		} else {
			held, same = now, 0
		}
	}
	return held
}

// noisySlowUpstream: 16 uploads of 24 MiB to an upstream that reads 1 KiB of
// each and waits. A plain proxy holds about the HTTP/2 window per upload.
func noisySlowUpstream(b *testing.B) []noisyRow {
	const uploads, size = 16, 24 << 20
	s := newNoisyStack(b, transport.DefaultConfig(), 0)
	var wg sync.WaitGroup
	var failed atomic.Int64
	body := bytes.Repeat(payload()[:1<<20], size/(1<<20))
	for range uploads {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodPost, s.Front.URL, bytes.NewReader(body))
			if err != nil {
				panic(err)
			}
			req.Header.Set(hdrNoisy, "slow")
			resp, err := s.Client.Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				failed.Add(1)
			}
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	held := s.waitArrived(b, uploads)
	s.letGo()
	wg.Wait()
	perUpload := float64(held) / uploads / (1 << 20)
	b.ReportMetric(perUpload, "MiB-held/upload")
	b.ReportMetric(float64(failed.Load()), "failed")
	return []noisyRow{
		{"slow-held", "slow upstream: 16 uploads of 24 MiB, the upstream took 1 KiB of each", "held per upload", fmt.Sprintf("%.2f MiB", perUpload)},
		{"slow-failed", "", "uploads failed once the upstream read on", strconv.FormatInt(failed.Load(), 10)},
	}
}

// noisyAnnouncers: 600 connections announce 50 MiB, send 1 KiB and stall;
// then 3,000 small writes.
func noisyAnnouncers(b *testing.B) []noisyRow {
	const announcers = 600
	s := newNoisyStack(b, transport.DefaultConfig(), 1<<10)
	s.Stall(b, noisytest.Uploads{N: announcers, Length: 50 << 20, Sent: 1 << 10, Body: payload()})
	held := s.waitArrived(b, announcers)
	perAnnouncer := float64(held) / announcers / (1 << 10)
	retryLater, failed := s.Writes(3000, payload())
	b.ReportMetric(perAnnouncer, "KiB-held/announcer")
	b.ReportMetric(float64(retryLater), "429s")
	b.ReportMetric(float64(failed), "failed")
	return []noisyRow{
		{"announcers-held", "announcers: 600 connections announce 50 MiB, send 1 KiB and stall (budget 500 MiB)", "held per announcer", fmt.Sprintf("%.1f KiB", perAnnouncer)},
		{"announcers-429", "", "of 3,000 small writes behind them (1-64 KiB, 5% GOAWAY): answered 429, failed", fmt.Sprintf("%d, %d", retryLater, failed)},
	}
}

// noisyStalled: 12 uploads send 4 MiB of 5 MiB and stall, on a budget of
// 50 MiB (5 MiB per request); then 3,000 small writes.
func noisyStalled(b *testing.B) []noisyRow {
	uploads := noisytest.StalledUploads(payload())
	s := newNoisyStack(b, noisytest.StalledConfig(), uploads.Sent)
	s.Stall(b, uploads)
	held := s.waitArrived(b, int64(uploads.N))
	retryLater, failed := s.Writes(3000, payload())
	yields := yieldsOf(s.Transport.Stats())
	b.ReportMetric(float64(held)/(1<<20), "MiB-held")
	b.ReportMetric(float64(retryLater), "429s")
	b.ReportMetric(float64(failed), "failed")
	return []noisyRow{
		{"stalled-held", "stalled: 12 uploads send 4 MiB of 5 MiB and stall (budget 50 MiB, 5 MiB per request)", "held by them", fmt.Sprintf("%.1f MiB", float64(held)/(1<<20))},
		{"stalled-429", "", "of 3,000 small writes behind them (1-64 KiB, 5% GOAWAY): answered 429, failed", fmt.Sprintf("%d, %d", retryLater, failed)},
		{"stalled-yields", "", "bodies that yielded", yields},
	}
}

// yieldsOf returns the yields Stats counts.
func yieldsOf(st transport.Stats) string { return strconv.FormatInt(st.Yields, 10) }

// noisyMarkdown renders rows as the section of docs/BENCHMARKS.md.
func noisyMarkdown(rows []noisyRow) []byte {
	var buf bytes.Buffer
	buf.WriteString("\n## Noisy neighbours\n\n")
	buf.WriteString("What slow, stalled and hostile clients cost the others (`BenchmarkNoisy`, one run of each scenario, ")
	buf.WriteString("HTTP/1.1 clients → `httputil.ReverseProxy` over `transport.New(..., DefaultConfig())` → TLS HTTP/2 upstream ")
	buf.WriteString("that ends 5% of its connections with a GOAWAY). \"Before\" is the same benchmark run once at 5c574e0, ")
	buf.WriteString("before the filler's read-ahead bound, charging for what arrived and yields (docs/design.md, \"Flow and fairness\").\n\n")
	buf.WriteString("| scenario | measure | before (5c574e0) | now | goal |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&buf, "| %s | %s | %s | %s | %s |\n", r.scenario, r.measure, cmp.Or(noisyBefore[r.id], "-"), r.now, cmp.Or(noisyGoal[r.id], "-"))
	}
	return buf.Bytes()
}

// noisyGoal holds the goals of the flow-and-fairness work, by row.
var noisyGoal = map[string]string{
	"slow-held":       "<= 3 MiB",
	"slow-failed":     "0",
	"announcers-held": "<= 8 KiB",
	"announcers-429":  "0, 0",
	"stalled-429":     "0, 0",
}

// noisyBefore holds the figures of one run of this benchmark at 5c574e0, the
// code before the read-ahead bound, charging for what arrived and yields, by
// row: this file (then the whole benchmark) and proxytest's Options.HTTP2
// copied into a checkout of that commit (with yieldsOf returning "-"), then
// `go test -run '^$' -bench '^BenchmarkNoisy$' -benchtime 1x ./bench`, on
// 2026-12-01 on the 2-core machine the rest of docs/BENCHMARKS.md comes
// from. A recorded figure, not one this run makes.
var noisyBefore = map[string]string{
	"slow-held":       "24.00 MiB",
	"slow-failed":     "0",
	"announcers-held": "853.3 KiB",
	"announcers-429":  "289, 0",
	"stalled-held":    "50.0 MiB",
	"stalled-429":     "251, 0",
	"stalled-yields":  "- (no yields)",
}

// The section puts each row's recorded before figure and goal beside it, and
// "-" where there is none.
func TestNoisyMarkdown(t *testing.T) {
	md := string(noisyMarkdown([]noisyRow{
		{"slow-held", "slow upstream", "held per upload", "2.00 MiB"},
		{"stalled-yields", "", "bodies that yielded", "12"},
		{"new", "", "a row without either", "1"},
	}))
	for _, want := range []string{
		"| slow upstream | held per upload | 24.00 MiB | 2.00 MiB | <= 3 MiB |\n",
		"|  | bodies that yielded | - (no yields) | 12 | - |\n",
		"|  | a row without either | - | 1 | - |\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
}
