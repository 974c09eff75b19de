package httputil

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/teebody/teebody/pkg/transport"
)

// tr is what every test of the suite that leaves ReverseProxy.Transport nil
// (or uses http.DefaultTransport) goes through.
var tr = transport.New(http.DefaultTransport, transport.DefaultConfig())

func init() { http.DefaultTransport = tr }

// TestMain runs the suite, then fails if no request buffered a body through
// tr: a run that never reached the transport proves nothing about it.
func TestMain(m *testing.M) {
	code := m.Run()
	s := tr.Stats()
	fmt.Printf("teebody: %d requests, %d buffered, %d replays served\n", s.Requests, s.Buffered, s.ReplaysServed)
	if code == 0 && s.Buffered == 0 {
		fmt.Println("teebody: no request body went through the transport")
		code = 1
	}
	os.Exit(code)
}
