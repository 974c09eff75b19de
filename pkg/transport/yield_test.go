package transport_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// A stalled upload holding the whole budget yields it to a small write
// through the real HTTP/2 transport: the small write is kept (no budget
// refusal), the upload loses only its replay and arrives intact once its
// client goes on, and Stats counts the yield.
func TestStalledUploadYieldsToSmallWrite(t *testing.T) {
	// The upload stalls one byte short of 4 MiB, inside its last chunk, so
	// that what it holds (4 MiB of chunks, charged before their bytes went
	// out) is settled once the upstream has its bytes.
	const sent = 4<<20 - 1
	received := make(chan struct{}) // closed once the upstream got sent bytes of the upload
	var got atomic.Int64
	upstream := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Body.Read(buf)
			h.Write(buf[:n])
			if got.Add(int64(n)) >= sent && r.Header.Get("X-Upload") != "" {
				select {
				case <-received:
				default:
					close(received)
				}
			}
			if err != nil {
				break
			}
		}
		if hex.EncodeToString(h.Sum(nil)) != r.Header.Get(hdrSum) {
			http.Error(w, "wrong bytes", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
	}), proxytest.Options{})
	cfg := quietConfig()
	cfg.TotalBytes = 4 << 20 // what the upload holds once stalled
	tr := transport.New(transportTo(t, upstream), cfg)
	client := &http.Client{Transport: tr}

	upload := uniformBodies(1, 1, sent+1<<20, sent+1<<20)[0].data
	sum := sha256.Sum256(upload)
	pr, pw := io.Pipe()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, upstream.URL, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(hdrSum, hex.EncodeToString(sum[:]))
	req.Header.Set("X-Upload", "1")
	uploadDone := make(chan error, 1)
	go func() {
		resp, err := client.Do(req)
		if err == nil {
			if resp.StatusCode != http.StatusOK {
				err = &statusError{resp.Status}
			}
			resp.Body.Close()
		}
		uploadDone <- err
	}()
	if _, err := pw.Write(upload[:sent]); err != nil {
		t.Fatal(err)
	}
	<-received
	if held, total := tr.Stats().BytesHeld, cfg.TotalBytes; held != total {
		t.Fatalf("the stalled upload holds %d of the budget's %d, want all of it", held, total)
	}

	small := uniformBodies(2, 1, 1<<10, 1<<10)[0].data
	smallSum := sha256.Sum256(small)
	req2, err := http.NewRequest(http.MethodPost, upstream.URL, hiddenReader{bytes.NewReader(small)})
	if err != nil {
		t.Fatal(err)
	}
	req2.ContentLength = int64(len(small))
	req2.Header.Set(hdrSum, hex.EncodeToString(smallSum[:]))
	resp, err := client.Do(req2)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("small write: %s", resp.Status)
	}
	st := tr.Stats()
	if st.Yields != 1 || st.BudgetRefusals != 0 {
		t.Errorf("yields %d, budget refusals %d; want 1, 0", st.Yields, st.BudgetRefusals)
	}

	if _, err := pw.Write(upload[sent:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if err := <-uploadDone; err != nil {
		t.Fatalf("the upload that yielded: %v", err)
	}
	drain(t, tr)
	t.Logf("stats %+v", tr.Stats())
}

type statusError struct{ status string }

func (e *statusError) Error() string { return "status " + e.status }

// Two Transports share a 64 MiB budget: 96 uploads of 512 KiB stall at a
// slow HTTP/2 upstream (its handler waits before it reads; its small
// frames and windows let the transport take about 64 KiB of each), bodies
// that cannot yield (their reader has finished no chunk) hold the rest,
// then writes of 300 KiB go to a second, fast upstream. Each write makes at
// most one upload yield, and only one that pays: a write of known length
// keeps its replay after a yield (the yield covered all of it). No write
// fails, and every upload arrives intact once the upstream reads.
func TestYieldsBehindStalledUploadsPay(t *testing.T) {
	const (
		uploads    = 96
		uploadSize = 512 << 10
		holders    = 16 // of 1 MiB each: the rest of the budget
		writes     = 24
		writeSize  = 300 << 10
	)
	budget := teebody.NewBudget(64 << 20)
	release := make(chan struct{})
	var arrived atomic.Int64
	slow := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		<-release
		h := sha256.New()
		if _, err := io.Copy(h, r.Body); err != nil || hex.EncodeToString(h.Sum(nil)) != r.Header.Get(hdrSum) {
			http.Error(w, "wrong bytes", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
	}), proxytest.Options{HTTP2: &http.HTTP2Config{MaxReadFrameSize: 16 << 10, MaxReceiveBufferPerConnection: 1 << 20, MaxReceiveBufferPerStream: 64 << 10}})
	fast := newUpstream(t, true, 0)
	cfg := quietConfig()
	cfg.Budget = budget
	trSlow := transport.New(transportTo(t, slow), cfg)
	trFast := transport.New(transportTo(t, fast.srv), cfg)

	// The holders first, while the budget is free: each keeps 1 MiB that
	// its reader has read one byte of.
	var unhold []func()
	for range holders {
		unhold = append(unhold, holdUnread(t, budget, 1<<20))
	}
	if got := budget.InUse(); got != holders<<20 {
		t.Fatalf("setup: holders hold %d, want %d", got, holders<<20)
	}

	bodies := uniformBodies(7, uploads, uploadSize, uploadSize)
	results := make(chan error, uploads)
	for i, b := range bodies {
		// The client sends in 16 KiB pieces, so the HTTP/2 transport
		// reads each upload as it arrives, until flow control stops it:
		// what the uploads could give back differs from what they hold.
		b.known = true
		req := newPost(context.Background(), slow.URL, b, fmt.Sprint("upload-", i))
		pr, pw := io.Pipe()
		req.Body = pr
		go func() {
			for off := 0; off < len(b.data); off += 16 << 10 {
				if _, err := pw.Write(b.data[off:min(off+16<<10, len(b.data))]); err != nil {
					return
				}
			}
			pw.Close()
		}()
		go func() {
			resp, err := (&http.Client{Transport: trSlow}).Do(req)
			if err == nil {
				if resp.StatusCode != http.StatusOK {
					err = &statusError{resp.Status}
				}
				resp.Body.Close()
			}
			results <- err
		}()
	}
	// Every upload's bytes in (the filler reads them all, within its
	// read-ahead) and every handler waiting.
	waitUntil(t, "the uploads hold the budget", func() bool {
		return arrived.Load() == uploads && budget.InUse() == budget.Total()
	})
	settle := budget.Yields()

	client := &http.Client{Transport: trFast}
	for i, b := range uniformBodies(8, writes, writeSize, writeSize) {
		yields := budget.Yields()
		refusals := trFast.Stats().BudgetRefusals
		resp, err := client.Do(newPost(context.Background(), fast.srv.URL, b, fmt.Sprint("write-", i)))
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("write %d: %s", i, resp.Status)
		}
		dy := budget.Yields() - yields
		kept := trFast.Stats().BudgetRefusals == refusals
		t.Logf("write %d (known length %v): %d yields, replay kept %v", i, b.known, dy, kept)
		if dy > 1 {
			t.Errorf("write %d made %d uploads yield, want at most 1", i, dy)
		}
		if dy > 0 && b.known && !kept {
			t.Errorf("write %d made %d uploads yield and lost its replay anyway", i, dy)
		}
	}
	t.Logf("%d yields while the uploads settled; stats %+v", settle, trFast.Stats())

	close(release)
	for range uploads {
		if err := <-results; err != nil {
			t.Errorf("upload: %v", err)
		}
	}
	for _, f := range unhold {
		f()
	}
	drain(t, trSlow)
	drain(t, trFast)
}

// holdUnread makes a body on budget that holds size bytes, all arrived, of
// which its reader has read one byte: a body that cannot yield. The
// returned function ends it.
func holdUnread(t *testing.T, budget *teebody.Budget, size int) func() {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan struct{})
	tee := teebody.New(pr, teebody.WithBudget(budget), teebody.WithSizeHint(int64(size)), teebody.WithOnDone(func() { close(done) }))
	r, err := tee.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, size)
	written := make(chan error, 1)
	go func() {
		_, err := pw.Write(data)
		written <- err
	}()
	if _, err := io.ReadFull(r, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	return func() {
		tee.Close()
		pw.Close()
		<-done
	}
}

// waitUntil waits, without a deadline of its own (go test's -timeout is
// the bound), until cond holds: for state that settles on goroutines of
// net/http's that no test can join.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-t.Context().Done():
			t.Fatalf("gave up waiting until %s", what)
		case <-time.After(time.Millisecond):
		}
	}
}
