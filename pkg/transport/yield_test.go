package transport_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
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
