package goawaytest_test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/teebody/teebody/pkg/goawaytest"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// A server whose HPACK decoder table is below the default serves a client
// that sends its first requests at once, with fields its own encoder
// indexed: the header blocks that the server decodes are in step with its
// table, however early they reach it.
func TestSmallServerHeaderTable(t *testing.T) {
	s := goawaytest.NewUnstartedServer(http.HandlerFunc(echo))
	s.Config.HTTP2 = &http.HTTP2Config{MaxDecoderHeaderTableSize: 256}
	s.Start()
	defer s.Close()
	for i := range 20 {
		c, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		var out, block bytes.Buffer
		out.WriteString(http2.ClientPreface)
		fr := http2.NewFramer(&out, c)
		if err := fr.WriteSettings(); err != nil {
			t.Fatal(err)
		}
		enc := hpack.NewEncoder(&block)
		const streams = 5
		for id := uint32(1); id < 2*streams; id += 2 {
			block.Reset()
			for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", "example.test"}, {":path", "/"},
				{"x-indexed", strings.Repeat("v", 100)}, {"x-stream", fmt.Sprint(id)}} {
				if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
					t.Fatal(err)
				}
			}
			if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Write(out.Bytes()); err != nil {
			t.Fatal(err)
		}
		for answered := 0; answered < streams; {
			f, err := fr.ReadFrame()
			if err != nil {
				t.Fatalf("connection %d: %d of %d answered: %v", i, answered, streams, err)
			}
			switch f := f.(type) {
			case *http2.HeadersFrame:
				answered++
			case *http2.GoAwayFrame:
				t.Fatalf("connection %d: GOAWAY %v after %d of %d answered", i, f.ErrCode, answered, streams)
			}
		}
	}
}

// A client may update its HPACK table to any size up to 4,096 until it
// acknowledges the server's smaller SETTINGS_HEADER_TABLE_SIZE (RFC 7541,
// section 4.2): its request is served.
func TestTableSizeUpdateBeforeAck(t *testing.T) {
	s := goawaytest.NewUnstartedServer(http.HandlerFunc(echo))
	s.Config.HTTP2 = &http.HTTP2Config{MaxDecoderHeaderTableSize: 1024}
	s.Start()
	defer s.Close()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	if f, err := fr.ReadFrame(); err != nil || f.Header().Type != http2.FrameSettings {
		t.Fatalf("first frame: %v, %v; want the server's SETTINGS", f, err)
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	enc.SetMaxDynamicTableSizeLimit(2048) // the block begins with an update to 2,048
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", "example.test"}, {":path", "/"}} {
		if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if f.Header().Type == http2.FrameHeaders {
			return
		}
	}
}
