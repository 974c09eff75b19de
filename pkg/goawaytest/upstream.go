package goawaytest

import (
	"io"
	"net/http"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// maxFragment is the largest header block fragment sent to the server: the
// smallest SETTINGS_MAX_FRAME_SIZE a peer may announce.
const maxFragment = 16384

// upstream relays the client's frames to the server until reading or
// writing fails.
func (c *conn) upstream(fr *frameReader) error {
	for {
		f, err := fr.read()
		if err != nil {
			return err
		}
		switch {
		case f.Type == http2.FrameHeaders:
			err = c.headers(fr, f)
		case f.Type == http2.FrameContinuation || f.Type == http2.FramePushPromise:
			return errBadFrame // a CONTINUATION out of its block, or a push from a client
		case f.StreamID%2 == 1 && f.StreamID > c.fwd: // a stream of the client's that the server never saw
			err = c.drop(f)
		default:
			if f.Type == http2.FrameRSTStream {
				c.endStream(f.StreamID)
			}
			err = c.bw.WriteRawFrame(f.Type, f.Flags, f.StreamID, f.payload)
		}
		if err != nil {
			return err
		}
	}
}

// headers handles a header block: it opens a stream, or carries a
// stream's trailers. A new stream goes to the server unless a GOAWAY
// refused it, a stream before it waits for its refusal, or Refuse picks
// it.
func (c *conn) headers(fr *frameReader, f frame) error {
	id, end := f.StreamID, f.Flags.Has(http2.FlagHeadersEndStream)
	fields, err := c.decode(fr, f)
	switch {
	case err != nil:
		return err
	case id <= c.fwd:
		return c.forward(id, fields, end) // trailers, or an error for the server to find
	case id <= c.seen:
		return c.drop(f) // the trailers of a stream kept from the server
	}
	c.seen = id
	if !c.openStream(id) || c.pending != 0 {
		return nil
	}
	if pick := c.s.opts.refuse; pick != nil && pick(c.request(fields, end)) {
		c.pending, c.received = id, 0
		if end {
			return c.refuse()
		}
		return nil
	}
	c.served++
	ending := c.s.opts.chance != nil && c.s.opts.chance() // a draw for every request served, even one EndAfter ends
	if n := c.s.opts.after; n > 0 && c.served == n {
		ending = true
	}
	if ending {
		// Before the stream goes to the server, so that the client has the
		// GOAWAY before the response and cannot send another request on
		// the connection after it: which requests a GOAWAY refuses does not
		// depend on how fast the handler answers.
		if err := c.goAway(id, http2.ErrCodeNo, nil); err != nil {
			return err
		}
	}
	c.fwd = id
	return c.forward(id, fields, end)
}

// drop keeps a frame of a stream above fwd from the server. The picked
// stream's end, trailers or reset, or the DATA that takes its body past
// RefuseAfter's n, sends its GOAWAY. The connection's flow control for DATA
// goes back to the client, and until then the picked stream's too.
func (c *conn) drop(f frame) error {
	if f.Type == http2.FrameRSTStream {
		c.endStream(f.StreamID)
	}
	waiting := false // the frame is the picked stream's DATA, short of the refusal
	if f.StreamID == c.pending {
		switch f.Type {
		case http2.FrameData:
			n, err := f.dataLen()
			if err != nil {
				return err
			}
			c.received += int64(n)
			waiting = c.received <= c.s.opts.refuseAfter && !f.endsStream()
			if !waiting {
				if err := c.refuse(); err != nil {
					return err
				}
			}
		case http2.FrameHeaders, http2.FrameRSTStream:
			if err := c.refuse(); err != nil {
				return err
			}
		}
	}
	if f.Type != http2.FrameData || f.Length == 0 {
		return nil
	}
	c.lockClient()
	defer c.wmu.Unlock()
	if err := c.cw.WriteWindowUpdate(0, f.Length); err != nil || !waiting {
		return err
	}
	return c.cw.WriteWindowUpdate(f.StreamID, f.Length)
}

// refuse sends the GOAWAY that refuses the pending stream, and every
// stream opened after it.
func (c *conn) refuse() error {
	c.pending = 0
	return c.goAway(c.fwd, http2.ErrCodeNo, nil)
}

// decode decodes the header block that begins with f, reading its
// CONTINUATION frames, into c.fields.
func (c *conn) decode(fr *frameReader, f frame) ([]hpack.HeaderField, error) {
	c.applyTableSize()
	c.fields = c.fields[:0]
	for {
		frag, err := f.fragment()
		if err != nil {
			return nil, err
		}
		if _, err := c.dec.Write(frag); err != nil {
			return nil, err
		}
		if f.Flags.Has(http2.FlagHeadersEndHeaders) {
			break
		}
		id := f.StreamID
		if f, err = fr.read(); err != nil {
			return nil, err
		}
		if f.Type != http2.FrameContinuation || f.StreamID != id {
			return nil, errBadFrame
		}
	}
	return c.fields, c.dec.Close()
}

// forward encodes a header block for the server and sends it.
func (c *conn) forward(id uint32, fields []hpack.HeaderField, end bool) error {
	c.encBuf.Reset()
	for _, f := range fields {
		if err := c.enc.WriteField(f); err != nil {
			return err
		}
	}
	block := c.encBuf.Bytes()
	frag := block[:min(len(block), maxFragment)]
	block = block[len(frag):]
	err := c.bw.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: frag, EndStream: end, EndHeaders: len(block) == 0})
	for err == nil && len(block) > 0 {
		frag = block[:min(len(block), maxFragment)]
		block = block[len(frag):]
		err = c.bw.WriteContinuation(id, len(block) == 0, frag)
	}
	return err
}

// newServerEncoder returns the encoder of the header blocks sent to the
// server. It keeps no dynamic table: Go's server decodes with the table
// size of its SETTINGS_HEADER_TABLE_SIZE from its first frame on, which the
// relay learns only once the server's SETTINGS arrive, often after the
// client's first header blocks. An encoder with the default 4,096 bytes
// would refer to entries that a server with a smaller table has evicted
// (COMPRESSION_ERROR). The blocks cross an in-memory connection, so their
// size does not matter.
func newServerEncoder(w io.Writer) *hpack.Encoder {
	enc := hpack.NewEncoder(w)
	enc.SetMaxDynamicTableSizeLimit(0)
	return enc
}

// applyTableSize lets dec take the size updates that the client's encoder
// may send: up to the largest of 4,096 and the SETTINGS_HEADER_TABLE_SIZE
// values of the server. A smaller value binds the client only once it
// acknowledged it (RFC 7541, section 4.2), which the relay does not track;
// the server never sees the client's table.
func (c *conn) applyTableSize() {
	if n := c.tableSize.Load(); n > c.table {
		c.table = n
		c.dec.SetAllowedMaxDynamicTableSize(n)
	}
}

// request returns what Refuse's function sees of a new stream's request.
func (c *conn) request(fields []hpack.HeaderField, end bool) *http.Request {
	return newRequest(fields, end, c.raw.RemoteAddr().String(), c.tls)
}
