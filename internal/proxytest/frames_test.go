package proxytest_test

import (
	"io"
	"net"
	"reflect"
	"testing"

	"golang.org/x/net/http2"

	"github.com/teebody/teebody/internal/proxytest"
)

// ServeFrames answers SETTINGS and PING, drops their acknowledgements,
// hands the other frames to handle, and returns nil when handle says stop.
func TestServeFrames(t *testing.T) {
	done := make(chan error, 1)
	var handled []http2.FrameType
	client, server := net.Pipe()
	defer client.Close()
	go func() {
		defer server.Close()
		done <- proxytest.ServeFrames(server, func(_ *http2.Framer, f http2.Frame) bool {
			handled = append(handled, f.Header().Type)
			return f.Header().Type != http2.FrameData
		})
	}()

	if _, err := io.WriteString(client, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(client, client)
	expect := func(want http2.FrameType, ack bool) http2.Frame {
		t.Helper()
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if h := f.Header(); h.Type != want || h.Flags.Has(http2.FlagSettingsAck) != ack {
			t.Fatalf("got %v, want %v (ack %t)", h, want, ack)
		}
		return f
	}
	expect(http2.FrameSettings, false)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	expect(http2.FrameSettings, true)
	data := [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	if err := fr.WritePing(false, data); err != nil {
		t.Fatal(err)
	}
	if got := expect(http2.FramePing, true).(*http2.PingFrame).Data; got != data {
		t.Fatalf("PING ack carries %v, want %v", got, data)
	}
	for _, err := range []error{
		fr.WriteSettingsAck(),
		fr.WritePing(true, data),
		fr.WriteWindowUpdate(0, 1),
		fr.WriteData(1, false, []byte("x")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("ServeFrames = %v, want nil once handle stops", err)
	}
	if want := []http2.FrameType{http2.FrameWindowUpdate, http2.FrameData}; !reflect.DeepEqual(handled, want) {
		t.Errorf("handled %v, want %v", handled, want)
	}
}

// ServeFrames returns the error that ends reading: here the client
// closing the connection after the preface.
func TestServeFramesClosed(t *testing.T) {
	client, server := net.Pipe()
	done := make(chan error, 1)
	go func() {
		defer server.Close()
		done <- proxytest.ServeFrames(server, func(*http2.Framer, http2.Frame) bool {
			t.Error("handle called")
			return true
		})
	}()
	if _, err := io.WriteString(client, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	client.Close() // the server's SETTINGS fail to write
	if err := <-done; err == nil {
		t.Fatal("ServeFrames = nil after the client closed")
	}
}
