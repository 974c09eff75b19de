package noisytest

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"sync/atomic"

	"github.com/teebody/teebody/internal/proxytest"
)

// Writes sends n POSTs of 1 to 64 KiB to the front from 32 clients, each
// body the start of body, which must hold 64 KiB. The sizes come from a
// fixed seed: every call sends the same ones. It returns how many writes
// were answered 429 and how many failed otherwise.
func (s *Stack) Writes(n int, body []byte) (retryLater, failed int64) {
	rng := rand.New(rand.NewPCG(16, 3000))
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = 1<<10 + rng.IntN(63<<10+1)
	}
	var tooMany, other atomic.Int64
	proxytest.Each(n, 32, func(i int) {
		req, err := http.NewRequest(http.MethodPost, s.Front.URL, bytes.NewReader(body[:sizes[i]]))
		if err != nil {
			panic(err)
		}
		resp, err := s.Client.Do(req)
		switch {
		case err != nil:
			other.Add(1)
		case resp.StatusCode == http.StatusTooManyRequests:
			tooMany.Add(1)
		case resp.StatusCode != http.StatusOK:
			other.Add(1)
		}
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	return tooMany.Load(), other.Load()
}
