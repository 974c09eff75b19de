//go:build unix

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// flunderLoad is the aggregator's load: workers × ops operations, each the create of a Flunder with a name used
// nowhere else, then its delete, all through kube-apiserver's aggregator. A body is 1 KiB but every largeEvery-th
// create's, which is 64 to 250 KiB (an annotation, below the 256 KiB that all annotations may take). A request
// that gets 429, or a 5xx with Retry-After, is sent again after that delay, as client-go does, up to 10 times.
type flunderLoad struct {
	url        string // kube-apiserver's
	client     *http.Client
	workers    int
	ops        int
	largeEvery int
	seed       uint64
}

// flunderOutcome counts what the load saw. A write is a create or a delete. A failed write got an error, or a
// status other than the one it wants and the ones counted as duplicates; a failed create is not followed by its
// delete. A duplicate is a write that met its own earlier copy: a create of a fresh name answered 409
// AlreadyExists, or a delete of a Flunder this load created and had not deleted answered 404 NotFound.
type flunderOutcome struct {
	Arm         string
	Writes      int
	LargeWrites int
	Failed      int
	LargeFailed int
	Duplicates  int
	RetryLater  int      // answers that the load waited for and sent again (429, or 5xx with Retry-After)
	GoawayText  int      // failed writes whose answer names a GOAWAY: the stock aggregator's 503 carries its error
	Unfinished  int      // operations not run when the load's time ran out
	Samples     []string // up to 5 failed writes, their answers cut to 300 bytes
	Seconds     float64
}

// loadTimeout bounds a whole run of the load.
const loadTimeout = 5 * time.Minute

func (l flunderLoad) run(ctx context.Context, arm string) flunderOutcome {
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	start := time.Now()
	var (
		mu  sync.Mutex
		out = flunderOutcome{Arm: arm}
		wg  sync.WaitGroup
	)
	for w := range l.workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(l.seed, uint64(w)))
			var o flunderOutcome
			for i := range l.ops {
				if ctx.Err() != nil {
					o.Unfinished += l.ops - i
					break
				}
				size := 1 << 10
				if l.largeEvery > 0 && i%l.largeEvery == l.largeEvery-1 {
					size = 64<<10 + rng.IntN(186<<10)
				}
				l.op(ctx, &o, fmt.Sprintf("w%d-op%d-%d", w, i, l.seed), size)
			}
			mu.Lock()
			defer mu.Unlock()
			out.add(o)
		})
	}
	wg.Wait()
	out.Seconds = time.Since(start).Seconds()
	return out
}

// op creates the Flunder name with a body of about size bytes, then deletes it.
func (l flunderLoad) op(ctx context.Context, o *flunderOutcome, name string, size int) {
	large := size > 1<<10
	// check counts a write, and reports whether it did what it wants.
	check := func(what string, want, dup, code int, body []byte, err error) bool {
		o.Writes++
		if large {
			o.LargeWrites++
		}
		switch {
		case err == nil && code == want:
			return true
		case err == nil && code == dup:
			o.Duplicates++
			return true
		}
		o.Failed++
		if large {
			o.LargeFailed++
		}
		text := string(body)
		if err != nil {
			text = err.Error()
		}
		if strings.Contains(text, "GOAWAY") {
			o.GoawayText++
		}
		if len(o.Samples) < 5 {
			o.Samples = append(o.Samples, fmt.Sprintf("%s %s: %d %.300s", what, name, code, text))
		}
		return false
	}
	code, body, err := l.write(ctx, o, http.MethodPost, l.url+flundersPath, flunderJSON(name, size))
	if !check("create", http.StatusCreated, http.StatusConflict, code, body, err) {
		return
	}
	large = false // a delete has no body
	code, body, err = l.write(ctx, o, http.MethodDelete, l.url+flundersPath+"/"+name, nil)
	check("delete", http.StatusOK, http.StatusNotFound, code, body, err)
}

// write sends one request, and again after the delay of a 429 or of a 5xx with Retry-After, up to 10 times.
func (l flunderLoad) write(ctx context.Context, o *flunderOutcome, method, url string, body []byte) (int, []byte, error) {
	for try := 1; ; try++ {
		code, b, retryAfter, err := send(ctx, l.client, method, url, body)
		if err != nil || try == 10 || retryAfter < 0 || !(code == http.StatusTooManyRequests || code >= 500) {
			return code, b, err
		}
		o.RetryLater++
		select {
		case <-ctx.Done():
			return code, b, ctx.Err()
		case <-time.After(time.Duration(retryAfter) * time.Second):
		}
	}
}

func (o *flunderOutcome) add(p flunderOutcome) {
	o.Writes += p.Writes
	o.LargeWrites += p.LargeWrites
	o.Failed += p.Failed
	o.LargeFailed += p.LargeFailed
	o.Duplicates += p.Duplicates
	o.RetryLater += p.RetryLater
	o.GoawayText += p.GoawayText
	o.Unfinished += p.Unfinished
	for _, s := range p.Samples {
		if len(o.Samples) < 5 {
			o.Samples = append(o.Samples, s)
		}
	}
}

func (o flunderOutcome) String() string {
	return fmt.Sprintf("%s: %d writes (%d of 64-250 KiB), %d failed (%d large, %d naming GOAWAY), %d duplicates, %d sent again after Retry-After, %d operations unfinished, %.1f s",
		o.Arm, o.Writes, o.LargeWrites, o.Failed, o.LargeFailed, o.GoawayText, o.Duplicates, o.RetryLater, o.Unfinished, o.Seconds)
}

// flunderJSON is a Flunder named name whose JSON is about size bytes, most of them an annotation.
func flunderJSON(name string, size int) []byte {
	const frame = `{"apiVersion":"wardle.example.com/v1alpha1","kind":"Flunder","metadata":{"name":%q,"annotations":{"e2e.teebody/pad":%q}},"spec":{}}`
	pad := max(size-len(frame)-len(name), 1)
	return fmt.Appendf(nil, frame, name, strings.Repeat("x", pad))
}

// send sends one request with a JSON body (if any) and returns the status, up to 64 KiB of the answer, and the
// seconds of its Retry-After (-1 without one). It reads the answer to its end.
func send(ctx context.Context, client *http.Client, method, url string, body []byte) (code int, b []byte, retryAfter int, err error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return 0, nil, -1, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, -1, err
	}
	defer resp.Body.Close()
	b, err = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err == nil {
		// Read to the end: a body closed early resets the stream, which the proxy logs as an aborted handler.
		_, err = io.Copy(io.Discard, resp.Body)
	}
	retryAfter = -1
	if s := resp.Header.Get("Retry-After"); s != "" {
		if n, convErr := strconv.Atoi(s); convErr == nil && n >= 0 {
			retryAfter = n
		}
	}
	return resp.StatusCode, b, retryAfter, err
}

// do is send without Retry-After.
func do(ctx context.Context, client *http.Client, method, url string, body []byte) (int, []byte, error) {
	code, b, _, err := send(ctx, client, method, url, body)
	return code, b, err
}

// insecureH2Client is an HTTP/2 client for a loopback server whose self-signed certificate it does not check.
func insecureH2Client() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12},
			ForceAttemptHTTP2: true,
		},
		Timeout: 30 * time.Second,
	}
}

// outcomeJSON is o as indented JSON.
func outcomeJSON(o flunderOutcome) []byte {
	b, _ := json.MarshalIndent(o, "", "  ")
	return append(b, '\n')
}
