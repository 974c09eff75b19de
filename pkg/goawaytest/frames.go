package goawaytest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"

	"golang.org/x/net/http2"
)

// frame is one HTTP/2 frame as read from the wire. Its payload is valid
// until the next read from the same frameReader.
type frame struct {
	http2.FrameHeader
	payload []byte
}

// frameReader reads whole frames; a header block (HEADERS or PUSH_PROMISE
// and its CONTINUATION frames) is read one frame at a time, by decode
// upstream and writeBlock downstream.
type frameReader struct {
	r   *bufio.Reader
	buf []byte
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 32<<10)}
}

// read reads the next frame.
func (fr *frameReader) read() (frame, error) {
	h, err := http2.ReadFrameHeader(fr.r)
	if err != nil {
		return frame{}, err
	}
	if cap(fr.buf) < int(h.Length) {
		fr.buf = make([]byte, h.Length)
	}
	p := fr.buf[:h.Length]
	if _, err := io.ReadFull(fr.r, p); err != nil {
		return frame{}, err
	}
	return frame{h, p}, nil
}

var errBadFrame = errors.New("goawaytest: malformed HTTP/2 frame")

// fragment returns the header block fragment of a HEADERS, PUSH_PROMISE or
// CONTINUATION frame: its payload without padding, priority or promised
// stream ID.
func (f frame) fragment() ([]byte, error) {
	p := f.payload
	pad := 0
	if f.Type != http2.FrameContinuation && f.Flags.Has(http2.FlagHeadersPadded) {
		if len(p) < 1 {
			return nil, errBadFrame
		}
		pad = int(p[0])
		p = p[1:]
	}
	skip := 0
	switch {
	case f.Type == http2.FrameHeaders && f.Flags.Has(http2.FlagHeadersPriority):
		skip = 5
	case f.Type == http2.FramePushPromise:
		skip = 4
	}
	if len(p) < skip+pad {
		return nil, errBadFrame
	}
	return p[skip : len(p)-pad], nil
}

// dataLen returns the length of a DATA frame's data: its payload without
// padding.
func (f frame) dataLen() (int, error) {
	n := len(f.payload)
	if f.Flags.Has(http2.FlagDataPadded) {
		if n < 1 || int(f.payload[0]) > n-1 {
			return 0, errBadFrame
		}
		n -= 1 + int(f.payload[0])
	}
	return n, nil
}

// goAway returns the last stream ID, error code and debug data of a GOAWAY
// frame.
func (f frame) goAway() (last uint32, code http2.ErrCode, debug []byte, err error) {
	if len(f.payload) < 8 {
		return 0, 0, nil, errBadFrame
	}
	last = binary.BigEndian.Uint32(f.payload) & (1<<31 - 1)
	code = http2.ErrCode(binary.BigEndian.Uint32(f.payload[4:]))
	return last, code, f.payload[8:], nil
}

// endsStream reports whether f is the last frame that its sender sends on
// its stream.
func (f frame) endsStream() bool {
	switch f.Type {
	case http2.FrameData, http2.FrameHeaders:
		return f.Flags.Has(http2.FlagDataEndStream) // the same bit in both
	case http2.FrameRSTStream:
		return true
	}
	return false
}
