//go:build unix

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// maxAttempts bounds the client's sends of one request when it retries 429s.
const maxAttempts = 10

// nginxLoad is one run of POSTs through a proxy.
type nginxLoad struct {
	arm         string // names the requests' ids, so that the backend tells the arms apart
	target      string // the proxy's base URL
	requests    int
	concurrency int
	bodySize    int
	retry429    bool // honour 429 + Retry-After and send again, as client-go does; else a 429 is a failure
}

// loadOutcome is what the client saw.
type loadOutcome struct {
	ok, failed, retryLater int             // retryLater: 429 answers received (each retried when retry429)
	failures               map[string]int  // failed requests by status and first line of body, or by error
	okIDs                  []string        // the ids answered 200
	latencies              []time.Duration // of each request, its retries after a 429 included
	duration               time.Duration
}

// run sends l.requests POSTs of l.bodySize bytes, each with its checksum and id, from l.concurrency goroutines.
// Each body is a window of one seeded pool of random bytes, so bodies differ and a run is repeatable.
func (l nginxLoad) run(ctx context.Context) loadOutcome {
	pool := make([]byte, 1<<20+l.bodySize)
	rand.NewChaCha8([32]byte{'n', 'g', 'i', 'n', 'x'}).Read(pool)
	client := &http.Transport{MaxIdleConnsPerHost: 2 * l.concurrency, DisableCompression: true}
	defer client.CloseIdleConnections()

	var (
		mu   sync.Mutex
		out  = loadOutcome{failures: map[string]int{}}
		next atomic.Int64
		wg   sync.WaitGroup
	)
	start := time.Now()
	for range l.concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= l.requests || ctx.Err() != nil {
					return
				}
				off := (i * 4099) % (len(pool) - l.bodySize)
				id := l.arm + "/" + strconv.Itoa(i)
				sent := time.Now()
				failure, retried := l.send(ctx, client, id, pool[off:off+l.bodySize])
				took := time.Since(sent)
				mu.Lock()
				out.latencies = append(out.latencies, took)
				out.retryLater += retried
				if failure == "" {
					out.ok++
					out.okIDs = append(out.okIDs, id)
				} else {
					out.failed++
					out.failures[failure]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	out.duration = time.Since(start)
	return out
}

// p99 returns the 99th percentile of the requests' latencies (0 without any).
func (o loadOutcome) p99() time.Duration {
	if len(o.latencies) == 0 {
		return 0
	}
	l := slices.Clone(o.latencies)
	slices.Sort(l)
	return l[(len(l)*99)/100]
}

// send POSTs body until it is answered 200 (""), or fails (a description), and returns how many 429s it got.
func (l nginxLoad) send(ctx context.Context, client http.RoundTripper, id string, body []byte) (failure string, retryLater int) {
	sum := sha256.Sum256(body)
	for range maxAttempts {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.target+"/upload", bytes.NewReader(body))
		if err != nil {
			return err.Error(), retryLater
		}
		req.Header.Set(hdrBodySum, hex.EncodeToString(sum[:]))
		req.Header.Set(hdrRequestID, id)
		resp, err := client.RoundTrip(req)
		if err != nil {
			return err.Error(), retryLater
		}
		text, err := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		switch {
		case err != nil:
			return "response body: " + err.Error(), retryLater
		case resp.StatusCode == http.StatusOK:
			return "", retryLater
		case resp.StatusCode == http.StatusTooManyRequests && l.retry429:
			retryLater++
			secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			if err != nil || secs < 1 {
				secs = 1
			}
			select { // the client's own wait, as the answer asks
			case <-time.After(time.Duration(secs) * time.Second):
			case <-ctx.Done():
				return ctx.Err().Error(), retryLater
			}
		case resp.StatusCode == http.StatusTooManyRequests:
			return resp.Status, retryLater + 1
		default:
			return fmt.Sprintf("%s %s", resp.Status, bytes.TrimSpace(text)), retryLater
		}
	}
	return fmt.Sprintf("still 429 after %d attempts", maxAttempts), retryLater
}
