package teebodycaddy_test

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http2"
)

// The headers by which a test tells the upstream what it sends.
const (
	hdrSum = "X-Body-Sha256" // hex SHA-256 of the whole body
	hdrID  = "X-Request-Id"  // one request, the same across Caddy's attempts
)

// upstream is a TLS HTTP/2 server on loopback, the upstream of the Caddy under
// test. Its first connection refuses every stream with a graceful GOAWAY once
// the client has sent a stream's headers and a piece of its body, as nginx
// does to the streams it had not accepted when it sends its GOAWAY after
// keepalive_requests; it serves the connections after it. Its handler reads
// each body whole and counts, by hdrID, the bodies that matched their hdrSum.
type upstream struct {
	*httptest.Server
	goaways atomic.Int64 // GOAWAYs sent by the refusing connection

	mu     sync.Mutex
	intact map[string]int // guarded by mu: hdrID -> intact arrivals
	wrong  int            // guarded by mu: bodies that did not match their checksum

	ln *refusingListener
}

// newUpstream starts an upstream serving h after its own check (nil: just
// the check, answering 200); refuse makes its first connection refuse its
// streams. The test's cleanup closes it.
func newUpstream(t *testing.T, refuse bool, h http.HandlerFunc) *upstream {
	t.Helper()
	u := &upstream{intact: map[string]int{}}
	u.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h != nil {
			h(w, r)
			return
		}
		u.check(w, r)
	}))
	u.Config.ErrorLog = log.New(io.Discard, "", 0)
	if refuse {
		u.ln = &refusingListener{Listener: u.Listener, u: u, conns: map[net.Conn]bool{}}
		u.Listener = u.ln
	}
	u.EnableHTTP2 = true
	u.StartTLS()
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

// refusingListener serves the first connection it accepts itself, refusing
// its streams (see upstream), and hands the others to the server.
type refusingListener struct {
	net.Listener
	u *upstream

	mu       sync.Mutex
	accepted bool              // guarded by mu: the refusing connection was accepted
	conns    map[net.Conn]bool // guarded by mu: the refusing connection while open
	closed   bool              // guarded by mu
	wg       sync.WaitGroup
}

func (l *refusingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		refuse := !l.accepted && !l.closed
		if refuse {
			l.accepted = true
			l.conns[c] = true
			l.wg.Add(1)
		}
		l.mu.Unlock()
		if !refuse {
			return c, nil
		}
		go l.refuse(tls.Server(c, l.u.TLS), c) // StartTLS set TLS before it called Accept
	}
}

// Close stops accepting, closes the refusing connection and waits for its
// goroutine; httptest.Server.Close calls it.
func (l *refusingListener) Close() error {
	err := l.Listener.Close()
	l.mu.Lock()
	l.closed = true
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
	return err
}

// refuse speaks HTTP/2 on tc until the client has sent a stream's headers
// and, unless it has no body, a DATA frame; then sends a GOAWAY whose last
// stream ID is 0, which refuses every stream, and reads until the client
// closes the connection.
func (l *refusingListener) refuse(tc *tls.Conn, raw net.Conn) {
	defer l.wg.Done()
	defer func() {
		raw.Close()
		l.mu.Lock()
		delete(l.conns, raw)
		l.mu.Unlock()
	}()
	if tc.Handshake() != nil || tc.ConnectionState().NegotiatedProtocol != http2.NextProtoTLS {
		return
	}
	if _, err := io.ReadFull(tc, make([]byte, len(http2.ClientPreface))); err != nil {
		return
	}
	fr := http2.NewFramer(tc, tc)
	if fr.WriteSettings() != nil {
		return
	}
	sent := false
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		var refuse bool
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() && fr.WriteSettingsAck() != nil {
				return
			}
		case *http2.HeadersFrame:
			refuse = f.StreamEnded()
		case *http2.DataFrame:
			refuse = true
		case *http2.PingFrame:
			if !f.IsAck() && fr.WritePing(true, f.Data) != nil {
				return
			}
		}
		if refuse && !sent {
			sent = true
			l.u.goaways.Add(1)
			if fr.WriteGoAway(0, http2.ErrCodeNo, nil) != nil {
				return
			}
		}
	}
}
