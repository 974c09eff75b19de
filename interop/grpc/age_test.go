package grpc

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// The load of one run: rpcs RPCs, a third of each kind, sent through
// clients grpc-go ClientConns with perClient RPCs in flight on each.
const (
	rpcs      = 1500
	clients   = 4
	perClient = 2
)

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// result is what a run of the load saw.
type result struct {
	failed    int            // RPCs that failed
	codes     map[string]int // failures by gRPC code
	seen      int            // RPC ids the server saw
	dups      int            // RPC ids the server saw more than once
	bad       int            // messages that failed the server's check
	upstreams int64          // upstream connections: one GOAWAY each but the last
	proxyLog  string         // what the proxy logged
	took      time.Duration
}

// runLoad sends the load through a ReverseProxy of transport rt and error
// handler eh, to a grpc-go server whose connections end after maxAge.
func runLoad(t *testing.T, rt http.RoundTripper, eh func(http.ResponseWriter, *http.Request, error)) result {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &countingListener{Listener: raw}
	u := startUpstream(t, ln, true)
	var logged proxytest.SyncBuffer
	addr, pool := startProxy(t, u, rt, eh, &logged)

	var next atomic.Uint64
	var mu sync.Mutex
	res := result{codes: map[string]int{}}
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		// No retry by the client: a proxy's user gets what the proxy answers.
		cc := dial(t, addr, pool, grpc.WithDisableRetry())
		for range perClient {
			wg.Go(func() {
				for {
					id := next.Add(1)
					if id > rpcs {
						return
					}
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound, not a wait
					var err error
					switch id % 3 {
					case 0:
						err = callUnary(ctx, cc, id)
					case 1:
						err = callUpload(ctx, cc, id)
					default:
						err = callChat(ctx, cc, id)
					}
					cancel()
					if err != nil {
						mu.Lock()
						res.failed++
						res.codes[status.Code(err).String()]++
						if res.failed <= 3 {
							t.Logf("RPC %d: %v", id, err)
						}
						mu.Unlock()
					}
				}
			})
		}
	}
	wg.Wait()
	res.took = time.Since(start)
	res.seen, res.dups, res.bad = u.svc.counts()
	res.upstreams = ln.n.Load()
	res.proxyLog = logged.String()
	return res
}

// closedBodyErrors are the errors of a read of a proxy's inbound body after
// the first attempt closed it, which the HTTP/2 transport's resend of a
// stream that never opened meets without GetBody: ReverseProxy's on Go
// 1.26, the server body's own on Go 1.27 (HTTP/1, HTTP/2).
var closedBodyErrors = map[string]bool{
	"ReverseProxy does an invalid Read on closed Body": true,
	"http: invalid Read on closed Body":                true,
	"body closed by handler":                           true,
}

// TestMaxConnectionAge sends unary, client-streaming and bidirectional RPCs
// through a ReverseProxy to a grpc-go server whose connections end after
// maxAge. Through the plain transport some fail: the load runs again, up to
// 10 times, until one does (on an idle machine about one upstream
// connection in 100 loses an RPC, on a loaded one more). Through teebody's
// transport none fails and none reaches the server twice, in every run; the
// load runs again, up to 5 times, until the transport has replayed a
// request, so that the GOAWAYs are known to have refused some.
func TestMaxConnectionAge(t *testing.T) {
	t.Run("plain", func(t *testing.T) {
		const runs = 10
		lost := 0
		for run := 1; run <= runs && lost == 0; run++ {
			r := runLoad(t, h2cTransport(), nil)
			t.Logf("plain run %d: %d of %d RPCs failed %v, %d upstream connections, %d duplicates, %d bad messages, in %v",
				run, r.failed, rpcs, r.codes, r.upstreams, r.dups, r.bad, r.took.Round(time.Millisecond))
			kinds := map[string]int{}
			goaway := 0 // failures the proxy logged with an error that a GOAWAY causes
			for line := range strings.Lines(r.proxyLog) {
				line = strings.TrimSpace(line)
				kinds[line]++
				// ReverseProxy's log line quotes the transport's error whole,
				// which ShouldRetryLater judges by its exact text. A resend
				// of a body its first attempt closed is lost to the GOAWAY
				// too, though its error proves nothing.
				if text, ok := strings.CutPrefix(line, "http: proxy error: "); ok &&
					(transport.ShouldRetryLater(errors.New(text)) || closedBodyErrors[text]) {
					goaway++
				}
			}
			t.Logf("plain run %d: the proxy logged %v", run, kinds)
			if r.dups != 0 || r.bad != 0 {
				t.Errorf("plain: %d duplicates, %d bad messages; want none", r.dups, r.bad)
			}
			lost = min(r.failed, goaway)
		}
		if lost == 0 {
			t.Errorf("plain: no RPC failed in %d runs; the load no longer shows the failure", runs)
		}
	})
	t.Run("teebody", func(t *testing.T) {
		const runs = 5
		var replays int64
		for run := 1; run <= runs && replays == 0; run++ {
			tr := transport.New(h2cTransport(), transport.DefaultConfig())
			r := runLoad(t, tr, tr.ErrorHandler)
			st := tr.Stats()
			replays = st.ReplaysServed
			t.Logf("teebody run %d: %d of %d RPCs failed %v, %d upstream connections, %d replays served, %d duplicates, %d bad messages, in %v",
				run, r.failed, rpcs, r.codes, r.upstreams, replays, r.dups, r.bad, r.took.Round(time.Millisecond))
			if r.failed != 0 || r.dups != 0 || r.bad != 0 || r.seen != rpcs {
				t.Errorf("teebody run %d: %d failed, %d duplicates, %d bad messages, %d of %d RPCs seen by the server; want 0, 0, 0, all",
					run, r.failed, r.dups, r.bad, r.seen, rpcs)
			}
			if r.proxyLog != "" {
				t.Errorf("teebody run %d: the proxy logged %q", run, r.proxyLog)
			}
		}
		if replays == 0 {
			t.Errorf("teebody: no replay in %d runs; the load no longer shows the fix", runs)
		}
	})
}
