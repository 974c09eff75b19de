package goawaytest

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

const maxStreamID = 1<<31 - 1

// A conn relays one client connection to the http.Server over an
// in-memory connection, frame by frame: upstream (from the client) in the
// goroutine that runs run, downstream in one that run starts and waits for.
// The relay is where GOAWAY frames are sent, and where the streams they
// refuse are counted and kept from the server.
//
// Upstream, it decodes every header block and encodes it again for the
// server, so that it can keep a stream from the server without the
// server's HPACK state going astray. A stream is kept from the server
// exactly when its ID is above fwd; the connection's flow control for the
// DATA frames of such a stream goes back to the client at once, and the
// stream's own too for a picked stream until its refusal.
type conn struct {
	s   *Server
	raw net.Conn // the client's connection, under TLS if the server serves it

	// Lock order: wmu before mu.
	wmu       sync.Mutex    // held across each write to the client, and a header block's frames
	cw        *http2.Framer // writes to the client; guarded by wmu
	ready     chan struct{} // closed once the server's SETTINGS went to the client, or downstream ended
	readyOnce sync.Once

	mu      sync.Mutex
	backend net.Conn            // guarded by mu: the relay's end of the connection to the server
	ended   bool                // guarded by mu: shut was called
	gone    bool                // guarded by mu: a GOAWAY was sent
	last    uint32              // guarded by mu: the lowest last stream ID of a GOAWAY sent; maxStreamID if none
	open    map[uint32]struct{} // guarded by mu: streams the client opened, not refused and not ended

	tableSize atomic.Uint32 // the largest SETTINGS_HEADER_TABLE_SIZE of the server; set downstream

	// Owned by the upstream goroutine.
	bw       *http2.Framer // writes to the server
	dec      *hpack.Decoder
	enc      *hpack.Encoder // from newServerEncoder
	encBuf   bytes.Buffer
	fields   []hpack.HeaderField // the header block being decoded
	table    uint32              // the largest table size that dec allows
	tls      *tls.ConnectionState
	fwd      uint32 // the highest stream ID handed to the server
	seen     uint32 // the highest stream ID the client opened
	pending  uint32 // the stream that Refuse or RefuseAfter picked, until its GOAWAY is sent
	received int64  // the body bytes of pending that arrived
	served   int64  // the streams handed to the server
}

// run relays the connection until either side ends it, and closes both.
func (c *conn) run() {
	defer c.shut()
	client := c.raw
	if c.s.useTLS {
		tc := tls.Server(c.raw, c.s.TLS)
		if tc.Handshake() != nil {
			return
		}
		st := tc.ConnectionState()
		if st.NegotiatedProtocol != http2.NextProtoTLS {
			return
		}
		client, c.tls = tc, &st
	}
	up := newFrameReader(client)
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(up.r, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	backend, err := c.s.pipes.dial(c.raw.RemoteAddr(), c.tls)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.backend = backend
	ended := c.ended
	c.mu.Unlock()
	if ended {
		return
	}
	if _, err := io.WriteString(backend, http2.ClientPreface); err != nil {
		return
	}
	c.cw = http2.NewFramer(client, nil)
	c.bw = http2.NewFramer(backend, nil)
	c.dec = hpack.NewDecoder(4096, func(f hpack.HeaderField) { c.fields = append(c.fields, f) })
	c.enc = newServerEncoder(&c.encBuf)
	c.table = 4096
	c.ready = make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.downstream(newFrameReader(backend))
		c.readyOnce.Do(func() { close(c.ready) })
		c.shut()
	}()
	_ = c.upstream(up)
	c.shut()
	<-done
}

// shut closes both connections, which ends both directions' reads and
// writes. It may be called more than once, from any goroutine.
func (c *conn) shut() {
	c.raw.Close()
	c.mu.Lock()
	c.ended = true
	b := c.backend
	c.mu.Unlock()
	if b != nil {
		b.Close()
	}
}

// openStream records a stream the client opened, and reports whether it
// may go to the server: false if a GOAWAY refused it, which it counts.
func (c *conn) openStream(id uint32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id > c.last {
		c.s.refusals.Add(1)
		return false
	}
	c.open[id] = struct{}{}
	return true
}

// endStream forgets a stream that either side has ended.
func (c *conn) endStream(id uint32) {
	c.mu.Lock()
	delete(c.open, id)
	c.mu.Unlock()
}

// goAway sends the client a GOAWAY whose last stream ID is the lower of
// last and that of any GOAWAY sent before, so that it never rises (RFC
// 9113, section 6.8). It counts the streams it refuses, before it sends
// it, and the connection's first GOAWAY.
func (c *conn) goAway(last uint32, code http2.ErrCode, debug []byte) error {
	c.lockClient()
	defer c.wmu.Unlock()
	c.mu.Lock()
	if !c.gone {
		c.gone = true
		c.s.goaways.Add(1)
	}
	c.last = min(c.last, last)
	last = c.last
	for id := range c.open {
		if id > last {
			delete(c.open, id)
			c.s.refusals.Add(1)
		}
	}
	c.mu.Unlock()
	return c.cw.WriteGoAway(last, code, debug)
}

// lockClient locks wmu for a write to the client that is not the server's:
// once the server's first frame, its SETTINGS, went to the client, as the
// client must see SETTINGS first (RFC 9113, section 3.4).
func (c *conn) lockClient() {
	<-c.ready
	c.wmu.Lock()
}
