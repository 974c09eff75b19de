package teebodycaddy_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math"
	"net/http"
	"sync"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

// The headers by which a test tells the upstream what it sends.
const (
	hdrSum = "X-Body-Sha256" // hex SHA-256 of the whole body
	hdrID  = "X-Request-Id"  // one request, the same across Caddy's attempts
)

// upstream is a TLS HTTP/2 server on loopback, the upstream of the Caddy under
// test: a proxytest.Server. With refuse, its first connection refuses every
// stream with a graceful GOAWAY once the client has sent a stream's headers
// and a piece of its body, as nginx does to the streams it had not accepted
// when it sends its GOAWAY after keepalive_requests, and it serves the
// connections after it (Goaways counts the refusals). Its handler reads each
// body whole and counts, by hdrID, the bodies that matched their hdrSum.
type upstream struct {
	*proxytest.Server

	mu     sync.Mutex
	intact map[string]int // guarded by mu: hdrID -> intact arrivals
	wrong  int            // guarded by mu: bodies that did not match their checksum
}

// newUpstream starts an upstream serving h after its own check (nil: just
// the check, answering 200); refuse makes its first connection refuse its
// streams. The test's cleanup closes it.
func newUpstream(t *testing.T, refuse bool, h http.HandlerFunc) *upstream {
	t.Helper()
	var opts proxytest.Options
	if refuse {
		opts.RefuseEvery = math.MaxInt64 // the first connection alone
	}
	return startUpstream(t, opts, h)
}

// newUpstreamRefusingPast starts an upstream whose first connection refuses
// its stream only once it has more than limit bytes of the body: a body
// over a per_request limit of limit has outgrown it when the refusal lands,
// however busy the machine, so it cannot be replayed.
func newUpstreamRefusingPast(t *testing.T, limit int64) *upstream {
	t.Helper()
	return startUpstream(t, proxytest.Options{RefuseEvery: math.MaxInt64, RefuseAfter: limit}, nil)
}

// startUpstream starts an upstream with opts serving h after its own check
// (nil: just the check).
func startUpstream(t *testing.T, opts proxytest.Options, h http.HandlerFunc) *upstream {
	u := &upstream{intact: map[string]int{}}
	u.Server = proxytest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h != nil {
			h(w, r)
			return
		}
		u.check(w, r)
	}), opts)
	t.Cleanup(u.Close)
	return u
}

// check reads the body whole and counts it if it matches its checksum.
func (u *upstream) check(w http.ResponseWriter, r *http.Request) {
	sum := sha256.New()
	if _, err := io.Copy(sum, r.Body); err != nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if hex.EncodeToString(sum.Sum(nil)) != r.Header.Get(hdrSum) {
		u.wrong++
		http.Error(w, "checksum mismatch", http.StatusBadRequest)
		return
	}
	u.intact[r.Header.Get(hdrID)]++
	w.WriteHeader(http.StatusOK)
}

// arrivals returns how many times the body of request id arrived intact, and
// how many bodies in all arrived damaged.
func (u *upstream) arrivals(id string) (intact, wrong int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.intact[id], u.wrong
}
