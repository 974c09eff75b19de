package http3_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/teebody/teebody/pkg/transport"
)

// The load of one run: POSTs from loadWorkers clients at once, bodies of 1
// byte to loadMaxBody bytes, enough of them for a dozen restarts or more:
// requests[every] for a restart every interval. No request starts after
// loadTime, so that a slow machine (-race, two busy cores) sends fewer, not
// longer.
var requests = map[time.Duration]int64{200 * time.Millisecond: 4000, 20 * time.Millisecond: 800}

const (
	loadWorkers = 16
	loadMaxBody = 32 << 10
	loadTime    = 8 * time.Second
)

// TestRollingRestartsLoad sends POSTs through an httputil.ReverseProxy to
// three HTTP/3 upstreams of quic-go, restarted one at a time with a
// graceful Shutdown while the load runs (a rolling restart every 200 ms,
// then every 20 ms). Each new server takes over the old one's socket, so
// only a GOAWAY can cost a request. Through a plain proxy, some requests
// fail with 502 (quic-go cannot resend a rejected stream without GetBody);
// through teebody's Transport none fails, and the upstreams process each
// request exactly once, with every byte.
//
// Rarely, quic-go's client closes a connection itself under a request's
// open stream, after a GOAWAY (facts_noerror_test.go): the request fails
// with "http3: parsing frame failed: H3_NO_ERROR (local)", an error that
// does not prove the upstream did not process it. No proxy may resend it,
// so its 502 is honest, and not teebody's to save. The test counts such
// requests apart, through both proxies, by the shape of the inner
// transport's error (isQuicLocalClose), and logs them by name. Every other
// failure through teebody fails the test, and so does any resend of such a
// request, a request processed twice or altered, or a 429.
func TestRollingRestartsLoad(t *testing.T) {
	for _, every := range []time.Duration{200 * time.Millisecond, 20 * time.Millisecond} {
		t.Run(fmt.Sprintf("every%v", every), func(t *testing.T) {
			plain := runLoad(t, every, false)
			ours := runLoad(t, every, true)
			t.Logf("restart every %v: plain proxy %d of %d failed (%d restarts, slowest %v); "+
				"teebody %d of %d failed (%d restarts, %d replays served, slowest %v); "+
				"quic-go's own local close (H3_NO_ERROR (local), no proxy's to save): plain %d, teebody %d",
				every, plain.lost(), plain.sent, plain.restarts, plain.slowest.Round(time.Millisecond),
				ours.lost(), ours.sent, ours.restarts, ours.replays, ours.slowest.Round(time.Millisecond),
				plain.quicClosed, ours.quicClosed)
			for _, r := range []struct {
				name string
				res  loadResult
			}{{"plain proxy", plain}, {"teebody", ours}} {
				if r.res.quicClosed > 0 {
					t.Logf("%s: quic-go's client closed its connection under %d requests (ids %v; "+
						"the upstreams had processed %d of them): %v",
						r.name, r.res.quicClosed, r.res.quicClosedIDs, r.res.quicClosedProcessed, r.res.quicErr)
				}
			}
			if plain.lost() == 0 {
				t.Error("the plain proxy lost no request: the restarts did not test the GOAWAY")
			}
			if plain.duplicates != 0 || ours.duplicates != 0 {
				t.Errorf("requests processed twice by the upstreams: plain %d, teebody %d", plain.duplicates, ours.duplicates)
			}
			if plain.corrupt != 0 || ours.corrupt != 0 {
				t.Errorf("bodies that reached the upstreams altered: plain %d, teebody %d", plain.corrupt, ours.corrupt)
			}
			if plain.other != 0 {
				t.Errorf("plain proxy: %d answers neither 200 nor 502", plain.other)
			}
			if ours.lost() != 0 {
				t.Errorf("teebody: %d of %d requests failed (%d with 429, %d with 502, %d other), "+
					"besides %d that quic-go's own local close failed",
					ours.lost(), ours.sent, ours.tooMany, ours.badGateway, ours.other, ours.quicClosed)
			}
			if plain.resentAfterClose != 0 || ours.resentAfterClose != 0 {
				t.Errorf("requests sent again after quic-go's local close, which proves nothing: plain %d, teebody %d",
					plain.resentAfterClose, ours.resentAfterClose)
			}
			if ours.restarts < 2 || ours.replays == 0 {
				t.Errorf("teebody: %d restarts and %d replays served: the run did not meet a GOAWAY", ours.restarts, ours.replays)
			}
			if ours.unprocessedOK != 0 {
				t.Errorf("teebody: %d requests answered 200 that the upstreams never processed", ours.unprocessedOK)
			}
			if ours.processed > ours.ok+ours.quicClosed {
				t.Errorf("teebody: the upstreams processed %d requests, more than the %d answered 200 and the %d "+
					"that quic-go's local close failed", ours.processed, ours.ok, ours.quicClosed)
			}
		})
	}
}

// loadResult is what one run counted.
type loadResult struct {
	sent, ok, badGateway, tooMany, other int
	processed, duplicates, corrupt       int
	restarts                             int
	replays                              int64
	slowest                              time.Duration

	// quicClosed counts the requests answered 502 whose last attempt
	// failed because quic-go's client closed its own connection under the
	// request's stream (isQuicLocalClose), listed in quicClosedIDs; of
	// those, the upstreams had processed quicClosedProcessed. quicErr is
	// the first such error.
	quicClosed          int
	quicClosedIDs       []int64
	quicClosedProcessed int
	quicErr             error

	// resentAfterClose counts the attempts that a proxy's transport made
	// for a request after quic-go's local close had failed one.
	resentAfterClose int
	// unprocessedOK counts the requests answered 200 that no upstream
	// processed.
	unprocessedOK int
}

// lost returns the requests that failed, but for those that quic-go's own
// local close failed: no proxy may send those again.
func (r loadResult) lost() int { return r.sent - r.ok - r.quicClosed }

// attemptLog is the proxy's inner transport: it notes which requests had
// an attempt fail with quic-go's local close, and counts the attempts made
// for one after that.
type attemptLog struct {
	inner http.RoundTripper

	mu     sync.Mutex
	closed map[string]error // request id -> the attempt's error
	resent int
}

func (a *attemptLog) RoundTrip(r *http.Request) (*http.Response, error) {
	id := r.Header.Get("X-Id")
	a.mu.Lock()
	if _, ok := a.closed[id]; ok {
		a.resent++
	}
	a.mu.Unlock()
	resp, err := a.inner.RoundTrip(r)
	if isQuicLocalClose(err) {
		a.mu.Lock()
		a.closed[id] = err
		a.mu.Unlock()
	}
	return resp, err
}

// closedBy returns the error of quic-go's local close that failed an
// attempt of request id, or nil.
func (a *attemptLog) closedBy(id int64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed[strconv.FormatInt(id, 10)]
}

// runLoad sends one run's load through a proxy to three upstreams, one of
// which restarts every interval, in turn. With fixed, the proxy's transport
// is teebody's around the HTTP/3 transport; else the HTTP/3 transport alone.
func runLoad(t *testing.T, every time.Duration, fixed bool) loadResult {
	var (
		mu   sync.Mutex
		seen = make(map[string]int) // request id -> times processed
		bad  int                    // bodies whose checksum did not match
	)
	upstreamHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "short body", http.StatusBadRequest)
			return
		}
		sum := sha256.Sum256(b)
		mu.Lock()
		seen[r.Header.Get("X-Id")]++
		if hex.EncodeToString(sum[:]) != r.Header.Get("X-Sum") {
			bad++
		}
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	var ups [3]*upstream
	for i := range ups {
		ups[i] = newUpstream(t, upstreamHandler, false)
	}

	attempts := &attemptLog{inner: newLoadClient(t), closed: make(map[string]error)}
	var rt http.RoundTripper = attempts
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			n, _ := strconv.Atoi(pr.In.Header.Get("X-Id"))
			pr.SetURL(&url.URL{Scheme: "https", Host: ups[n%len(ups)].addr})
		},
		ErrorLog: discardLog,
	}
	var tr *transport.Transport
	if fixed {
		tr = transport.New(attempts, transport.DefaultConfig())
		rt, proxy.ErrorHandler = tr, tr.ErrorHandler
	}
	proxy.Transport = rt
	front := httptest.NewServer(proxy)
	defer front.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadWorkers}}
	defer client.CloseIdleConnections()

	// The rolling restart: one upstream every interval, in turn.
	stop := make(chan struct{})
	var restarts int
	restarterDone := make(chan struct{})
	go func() {
		defer close(restarterDone)
		ticker := time.NewTicker(every)
		defer ticker.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ticker.C:
				ups[restarts%len(ups)].restart()
				restarts++
			}
		}
	}()

	var res loadResult
	var next atomic.Int64
	var resMu sync.Mutex
	codes := make(map[int64]int) // request id -> the status the client got
	var wg sync.WaitGroup
	deadline := time.Now().Add(loadTime)
	for range loadWorkers {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				id := next.Add(1) - 1
				if id >= requests[every] {
					return
				}
				t0 := time.Now()
				code := postOne(t, client, front.URL, id)
				took := time.Since(t0)
				// The proxy answered after its transport's last attempt.
				closedBy := attempts.closedBy(id)
				resMu.Lock()
				res.slowest = max(res.slowest, took)
				res.sent++
				codes[id] = code
				switch {
				case code == http.StatusOK:
					res.ok++
				case code == http.StatusBadGateway && closedBy != nil:
					res.quicClosed++
					res.quicClosedIDs = append(res.quicClosedIDs, id)
					if res.quicErr == nil {
						res.quicErr = closedBy
					}
				case code == http.StatusBadGateway:
					res.badGateway++
				case code == http.StatusTooManyRequests:
					res.tooMany++
				default:
					res.other++
				}
				resMu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	<-restarterDone
	res.restarts = restarts

	mu.Lock()
	defer mu.Unlock()
	for _, n := range seen {
		res.processed++
		if n > 1 {
			res.duplicates += n - 1
		}
	}
	for id, code := range codes {
		if code == http.StatusOK && seen[strconv.FormatInt(id, 10)] == 0 {
			res.unprocessedOK++
		}
	}
	for _, id := range res.quicClosedIDs {
		if seen[strconv.FormatInt(id, 10)] > 0 {
			res.quicClosedProcessed++
		}
	}
	slices.Sort(res.quicClosedIDs)
	attempts.mu.Lock()
	res.resentAfterClose = attempts.resent
	attempts.mu.Unlock()
	res.corrupt = bad
	if tr != nil {
		res.replays = tr.Stats().ReplaysServed
	}
	return res
}

// postOne sends request id, a random body with its checksum, and returns
// the status of the answer, or 0 if there was none.
func postOne(t *testing.T, client *http.Client, front string, id int64) int {
	body := make([]byte, 1+rand.IntN(loadMaxBody))
	for i := range body {
		body[i] = byte(rand.Uint32())
	}
	sum := sha256.Sum256(body)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, front, io.NopCloser(bytes.NewReader(body)))
	if err != nil {
		t.Error(err)
		return 0
	}
	req.ContentLength = int64(len(body))
	req.Header.Set("X-Id", strconv.FormatInt(id, 10))
	req.Header.Set("X-Sum", hex.EncodeToString(sum[:]))
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("request %d: %v", id, err)
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// newLoadClient returns an http3.Transport that dials every connection
// from one UDP socket on 127.0.0.1. Cleanup closes both.
func newLoadClient(t *testing.T) *http3.Transport {
	_, pool := testCert(t)
	pc, err := net.ListenUDP("udp", loopback)
	if err != nil {
		t.Fatal(err)
	}
	qt := &quic.Transport{Conn: pc}
	h3 := &http3.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		Dial: func(ctx context.Context, addr string, tlsConf *tls.Config, conf *quic.Config) (*quic.Conn, error) {
			raddr, err := net.ResolveUDPAddr("udp", addr)
			if err != nil {
				return nil, err
			}
			return qt.DialEarly(ctx, raddr, tlsConf, conf)
		},
	}
	t.Cleanup(func() {
		h3.Close()
		qt.Close()
		pc.Close()
	})
	return h3
}

// discardLog takes the plain proxy's error lines: its 502s are counted.
var discardLog = log.New(io.Discard, "", 0)
