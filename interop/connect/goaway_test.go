package connect_test

import (
	"context"
	"encoding/binary"
	"net"
	"net/http"
	"sync"
)

// goawayWatcher tells when a client's h2c connection has received a GOAWAY
// frame, and which stream the GOAWAY names as the last one it processed.
// Each connection parses the frame headers in its own Read, as the client's
// read loop receives them, so the watcher starts no goroutine and sees
// every byte once.
type goawayWatcher struct {
	seen chan struct{} // closed at the first GOAWAY
	once sync.Once
	mu   sync.Mutex
	last uint32 // guarded by mu: the first GOAWAY's last stream ID
}

func newGoawayWatcher() *goawayWatcher { return &goawayWatcher{seen: make(chan struct{})} }

// transport returns an h2c transport whose connections the watcher watches.
func (w *goawayWatcher) transport() *http.Transport {
	tr := h2c.transport()
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &watchedConn{Conn: c, w: w}, nil
	}
	return tr
}

// lastStreamID returns the last stream ID of the first GOAWAY seen.
func (w *goawayWatcher) lastStreamID() uint32 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

func (w *goawayWatcher) found(last uint32) {
	w.once.Do(func() {
		w.mu.Lock()
		w.last = last
		w.mu.Unlock()
		close(w.seen)
	})
}

// watchedConn parses what it reads for its watcher. Only the client's read
// loop reads it, so the parser's state needs no lock.
type watchedConn struct {
	net.Conn
	w *goawayWatcher

	hdr    [9]byte // the current frame's header, once n reaches 9
	n      int     // header bytes read of the current frame
	skip   int     // payload bytes of the current frame still to pass
	goaway bool    // the current frame is a GOAWAY
	want   int     // bytes of the GOAWAY's payload still to keep
	keep   [4]byte // the GOAWAY's last stream ID
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.feed(p[:n])
	return n, err
}

// feed parses p, the next bytes the server sent. A frame is a 9-byte header
// (a 24-bit length, the type, flags, the stream ID), then its payload; the
// server sends no preface of its own. A GOAWAY (type 7) begins its payload
// with the last stream ID.
func (c *watchedConn) feed(p []byte) {
	for len(p) > 0 {
		if c.skip > 0 {
			k := min(c.skip, len(p))
			if c.goaway && c.want > 0 {
				k = min(k, c.want)
				copy(c.keep[len(c.keep)-c.want:], p[:k])
				c.want -= k
				if c.want == 0 {
					c.w.found(binary.BigEndian.Uint32(c.keep[:]) & (1<<31 - 1))
				}
			}
			c.skip -= k
			p = p[k:]
			continue
		}
		k := copy(c.hdr[c.n:], p)
		c.n += k
		p = p[k:]
		if c.n == len(c.hdr) {
			c.n = 0
			c.skip = int(c.hdr[0])<<16 | int(c.hdr[1])<<8 | int(c.hdr[2])
			c.goaway = c.hdr[3] == 0x7
			c.want = len(c.keep)
		}
	}
}
