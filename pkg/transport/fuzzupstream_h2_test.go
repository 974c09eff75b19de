package transport_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/teebody/teebody/internal/proxytest"
)

// hdrFuzzReq names the request of a script that a stream carries: its
// index in script.reqs.
const hdrFuzzReq = "X-Fuzz-Request"

// h2Upstream is an HTTP/2 upstream, h2c with prior knowledge on in-memory
// connections, that does with each stream what its script plans for that
// attempt of that request. It is honest by construction: a stream it has
// applied it never refuses, with REFUSED_STREAM or with a GOAWAY below
// it, and a stream it has refused it never applies.
type h2Upstream struct {
	s  *script
	wg sync.WaitGroup // the goroutines serving and writing connections

	mu       sync.Mutex
	closed   bool       // guarded by mu: dial fails
	conns    []net.Conn // guarded by mu: the server ends of every connection
	attempts []int      // guarded by mu: streams seen per request
	log      upstreamLog
}

// upstreamLog is what an upstream did, for the oracle.
type upstreamLog struct {
	applied  [][]appliedWrite     // by request
	answered map[answerKey]answer // by request and attempt
	// protoResets counts, by request, the applied streams the upstream
	// reset with PROTOCOL_ERROR, which Go 1.26 resends through GetBody
	// (golang/go#77843).
	protoResets []int
}

// appliedWrite is one apply of a request: the body bytes received by then.
type appliedWrite struct {
	attempt  int
	body     []byte
	complete bool // the body had ended
}

type answerKey struct{ req, attempt int }

type answer struct {
	status int
	data   bool
}

func newH2Upstream(s *script) *h2Upstream {
	n := len(s.reqs)
	return &h2Upstream{s: s, attempts: make([]int, n), log: upstreamLog{
		applied: make([][]appliedWrite, n), answered: map[answerKey]answer{}, protoResets: make([]int, n)}}
}

// dial connects to the upstream, as an http.Transport's DialContext.
func (u *h2Upstream) dial(context.Context, string, string) (net.Conn, error) {
	client, server := net.Pipe()
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil, net.ErrClosed
	}
	u.conns = append(u.conns, server)
	u.mu.Unlock()
	w := newQueueWriter(server, &u.wg)
	hc := &h2Conn{u: u, w: w, streams: map[uint32]*h2Stream{}, lastID: 1<<31 - 1}
	hc.dec = hpack.NewDecoder(4096, nil)
	hc.enc = hpack.NewEncoder(&hc.encBuf)
	u.wg.Go(func() {
		_ = proxytest.ServeFrames(struct {
			io.Reader
			io.Writer
		}{server, w}, hc.handle)
		// Until what was written is flushed and the connection closed,
		// whatever the client writes is read and dropped: a client that
		// waits to write may not be reading.
		u.wg.Go(func() { io.Copy(io.Discard, server) })
		w.close()
	})
	return client, nil
}

// close closes every connection and waits for their goroutines.
func (u *h2Upstream) close() {
	u.mu.Lock()
	u.closed = true
	for _, c := range u.conns {
		c.Close()
	}
	u.mu.Unlock()
	u.wg.Wait()
}

// queueWriter writes to a connection from a goroutine of its own, in
// order, so that the upstream goes on reading while the client is busy
// writing: net.Pipe has no buffer, and two peers writing at once would
// wait for each other.
type queueWriter struct{ q chan []byte }

func newQueueWriter(c net.Conn, wg *sync.WaitGroup) *queueWriter {
	w := &queueWriter{q: make(chan []byte, 1024)}
	wg.Go(func() {
		var err error
		for b := range w.q {
			if err == nil {
				_, err = c.Write(b)
			}
		}
		c.Close()
	})
	return w
}

func (w *queueWriter) Write(p []byte) (int, error) {
	w.q <- bytes.Clone(p) // the Framer reuses its buffer
	return len(p), nil
}

// close closes the connection once everything written before is written.
func (w *queueWriter) close() { close(w.q) }

// h2Conn is the upstream's side of one connection. Only the goroutine
// serving it uses it.
type h2Conn struct {
	u       *h2Upstream
	w       *queueWriter
	dec     *hpack.Decoder
	enc     *hpack.Encoder
	encBuf  bytes.Buffer
	streams map[uint32]*h2Stream

	block      []byte // a header block awaiting its CONTINUATION frames
	maxApplied uint32 // the highest stream applied
	lastID     uint32 // the last stream ID of the GOAWAY sent, or 2³¹-1
}

// h2Stream is one stream: one attempt of one request.
type h2Stream struct {
	id           uint32
	req, attempt int
	plan         streamPlan
	got          []byte
	ended        bool // the client's END_STREAM came
	acted        bool // the plan's action was taken
	applied      bool
	done         bool // reset by either side: nothing more happens on it
}

// handle is ServeFrames's callback; false closes the connection.
func (hc *h2Conn) handle(fr *http2.Framer, f http2.Frame) bool {
	switch f := f.(type) {
	case *http2.HeadersFrame:
		hc.block = append(hc.block[:0], f.HeaderBlockFragment()...)
		if !f.HeadersEnded() {
			return true
		}
		return hc.headers(fr, f.StreamID, f.StreamEnded())
	case *http2.ContinuationFrame:
		hc.block = append(hc.block, f.HeaderBlockFragment()...)
		if !f.HeadersEnded() {
			return true
		}
		return hc.headers(fr, f.StreamID, false) // END_STREAM rides on HEADERS; Go's client puts none there with CONTINUATION
	case *http2.DataFrame:
		if n := f.Length; n > 0 {
			fr.WriteWindowUpdate(0, n) // the connection's window: never the reason a stream waits
		}
		st := hc.streams[f.StreamID]
		if st == nil || st.done {
			return true
		}
		if n := f.Length; n > 0 && !f.StreamEnded() {
			fr.WriteWindowUpdate(st.id, n)
		}
		st.got = append(st.got, f.Data()...)
		st.ended = f.StreamEnded()
		return hc.step(fr, st)
	case *http2.RSTStreamFrame:
		if st := hc.streams[f.StreamID]; st != nil {
			st.done = true
		}
	}
	return true
}

// headers handles a complete header block of stream id.
func (hc *h2Conn) headers(fr *http2.Framer, id uint32, ended bool) bool {
	fields, err := hc.dec.DecodeFull(hc.block)
	if err != nil {
		return false
	}
	if st := hc.streams[id]; st != nil { // trailers
		if !st.done {
			st.ended = st.ended || ended
			return hc.step(fr, st)
		}
		return true
	}
	req := -1
	for _, hf := range fields {
		if hf.Name == "x-fuzz-request" {
			req, _ = strconv.Atoi(hf.Value)
		}
	}
	if req < 0 || req >= len(hc.u.s.reqs) {
		return fr.WriteRSTStream(id, http2.ErrCodeProtocol) == nil
	}
	hc.u.mu.Lock()
	attempt := hc.u.attempts[req]
	hc.u.attempts[req]++
	hc.u.mu.Unlock()
	st := &h2Stream{id: id, req: req, attempt: attempt, plan: hc.u.s.plan(req, attempt), ended: ended}
	hc.streams[id] = st
	if id > hc.lastID { // a GOAWAY refused it before it came
		st.done = true
		return true
	}
	return hc.step(fr, st)
}

// step takes st's action once its plan's point is reached.
func (hc *h2Conn) step(fr *http2.Framer, st *h2Stream) bool {
	p := st.plan
	if st.acted || st.done || st.id > hc.lastID {
		return true
	}
	switch p.at {
	case atSome:
		if len(st.got) < p.some && !st.ended {
			return true
		}
	case atEnd:
		if !st.ended {
			return true
		}
	}
	st.acted = true
	if p.apply {
		hc.apply(st)
	}
	switch p.act {
	case actAnswer:
		return hc.answer(fr, st, p)
	case actReset:
		code := p.code
		if st.applied && code == http2.ErrCodeRefusedStream {
			code = http2.ErrCodeInternal // honest: an applied stream is never refused
		}
		if st.applied && code == http2.ErrCodeProtocol {
			hc.u.mu.Lock()
			hc.u.log.protoResets[st.req]++
			hc.u.mu.Unlock()
		}
		st.done = true
		return fr.WriteRSTStream(st.id, code) == nil
	case actGoAway:
		last := hc.goAwayLast(st.id, p.last)
		hc.lastID = last
		if fr.WriteGoAway(last, p.code, p.debug) != nil {
			return false
		}
		switch p.then {
		case thenClose:
			return false
		case thenAnswer:
			if st.id <= last {
				return hc.answer(fr, st, p)
			}
		}
		return true
	case actClose:
		return false
	}
	return true // actStall
}

// goAwayLast returns the last stream ID of a GOAWAY that stream id sends
// with the relative last ID rel: never below a stream applied (honest),
// never above an earlier GOAWAY's (RFC 9113, section 6.8).
func (hc *h2Conn) goAwayLast(id uint32, rel int) uint32 {
	var last uint32
	switch rel {
	case lastBelow:
		last = max(id, 2) - 2
	case lastStream:
		last = id
	case lastAbove:
		last = id + 2
	case lastMax:
		last = 1<<31 - 1
	}
	return min(max(last, hc.maxApplied), hc.lastID)
}

// apply records st's request as applied with the bytes received so far.
func (hc *h2Conn) apply(st *h2Stream) {
	st.applied = true
	hc.maxApplied = max(hc.maxApplied, st.id)
	hc.u.mu.Lock()
	defer hc.u.mu.Unlock()
	hc.u.log.applied[st.req] = append(hc.u.log.applied[st.req],
		appliedWrite{attempt: st.attempt, body: bytes.Clone(st.got), complete: st.ended})
}

// answerText is the body of the upstream's answer to an attempt, and the
// value of its X-Answer header.
func answerText(req, attempt int) string { return fmt.Sprintf("answer %d/%d", req, attempt) }

// answer answers st as p says.
func (hc *h2Conn) answer(fr *http2.Framer, st *h2Stream, p streamPlan) bool {
	hc.u.mu.Lock()
	hc.u.log.answered[answerKey{st.req, st.attempt}] = answer{status: p.status, data: p.data}
	hc.u.mu.Unlock()
	st.done = true
	text := answerText(st.req, st.attempt)
	block := hc.encode(":status", strconv.Itoa(p.status), "x-answer", text)
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: st.id, BlockFragment: block,
		EndHeaders: true, EndStream: !p.data && !p.trailers}); err != nil {
		return false
	}
	if p.data {
		if err := fr.WriteData(st.id, !p.trailers, []byte(text)); err != nil {
			return false
		}
	}
	if p.trailers {
		block := hc.encode("x-trailer", text)
		return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: st.id, BlockFragment: block,
			EndHeaders: true, EndStream: true}) == nil
	}
	return true
}

// encode returns the header block of the name and value pairs kv.
func (hc *h2Conn) encode(kv ...string) []byte {
	hc.encBuf.Reset()
	for i := 0; i < len(kv); i += 2 {
		hc.enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return bytes.Clone(hc.encBuf.Bytes())
}
