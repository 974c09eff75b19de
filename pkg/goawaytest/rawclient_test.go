package goawaytest_test

import (
	"bytes"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/teebody/teebody/pkg/goawaytest"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// rawClient speaks HTTP/2 frame by frame to a plain-text Server, for
// tests that need to know which frames went where. Every read and write
// fails after ten seconds.
type rawClient struct {
	t   *testing.T
	c   net.Conn
	fr  *http2.Framer
	buf bytes.Buffer
	enc *hpack.Encoder
}

func dialRaw(t *testing.T, s *goawaytest.Server) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	rc := &rawClient{t: t, c: c, fr: http2.NewFramer(c, c)}
	rc.enc = hpack.NewEncoder(&rc.buf)
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	rc.check(rc.fr.WriteSettings())
	return rc
}

func (rc *rawClient) check(err error) {
	rc.t.Helper()
	if err != nil {
		rc.t.Fatal(err)
	}
}

// headers opens stream id with a request for path.
func (rc *rawClient) headers(id uint32, method, path string, end bool) {
	rc.t.Helper()
	rc.buf.Reset()
	for _, f := range [][2]string{{":method", method}, {":scheme", "http"}, {":authority", "example.test"}, {":path", path}} {
		rc.check(rc.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}))
	}
	rc.check(rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: rc.buf.Bytes(), EndStream: end, EndHeaders: true}))
}

// sync sends a PING and reads until its acknowledgement, returning the
// frames before it: the relay has handled every frame sent before, and
// sent every frame of its own that they made it send. (A handler's
// response may still be on its way.)
func (rc *rawClient) sync() []http2.Frame {
	rc.t.Helper()
	data := [8]byte{'s', 'y', 'n', 'c'}
	rc.check(rc.fr.WritePing(false, data))
	var seen []http2.Frame
	for {
		f := rc.read()
		if p, ok := f.(*http2.PingFrame); ok && p.IsAck() && p.Data == data {
			return seen
		}
		seen = append(seen, f)
	}
}

// read reads the next frame, answering the server's SETTINGS.
func (rc *rawClient) read() http2.Frame {
	rc.t.Helper()
	for {
		f, err := rc.fr.ReadFrame()
		rc.check(err)
		if s, ok := f.(*http2.SettingsFrame); ok {
			if !s.IsAck() {
				rc.check(rc.fr.WriteSettingsAck())
			}
			continue
		}
		return f
	}
}

// describe names the frames that matter to the tests: GOAWAY with its last
// stream ID, HEADERS and RST_STREAM with their stream, and WINDOW_UPDATE
// of the connection with its increment.
func describe(fs []http2.Frame) []string {
	var out []string
	for _, f := range fs {
		switch f := f.(type) {
		case *http2.GoAwayFrame:
			out = append(out, "GOAWAY "+itoa(f.LastStreamID)+" "+f.ErrCode.String())
		case *http2.HeadersFrame:
			out = append(out, "HEADERS "+itoa(f.StreamID))
		case *http2.RSTStreamFrame:
			out = append(out, "RST_STREAM "+itoa(f.StreamID))
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 && f.Increment < 1<<16 { // not the server's own opening one
				out = append(out, "WINDOW_UPDATE "+itoa(f.Increment))
			}
		}
	}
	return out
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

func hpackField(name, value string) hpack.HeaderField {
	return hpack.HeaderField{Name: name, Value: value}
}

// until reads frames until it has seen every frame in want (as describe
// names them), and returns what it saw, described.
func (rc *rawClient) until(want ...string) []string {
	rc.t.Helper()
	var seen []string
	for !containsAll(seen, want) {
		seen = append(seen, describe([]http2.Frame{rc.read()})...)
	}
	return seen
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
