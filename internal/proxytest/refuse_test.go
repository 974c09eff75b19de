package proxytest_test

import (
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
	"golang.org/x/net/http2"
)

// A connection that RefuseEvery picks refuses the first request it carries,
// every time: a body the client cannot replay fails with the HTTP/2
// transport's GOAWAY error, one it can is sent again, through GetBody, on
// the next connection, which serves it.
func TestServerRefuseEvery(t *testing.T) {
	h := &conns{addrs: map[string]bool{}}
	s := proxytest.NewServer(h, proxytest.Options{RefuseEvery: 2})
	defer s.Close()
	body := []byte("a body the first connection refuses")
	// Each request gets a transport of its own, so that it opens a
	// connection of its own.
	send := func(req *http.Request) (*http.Response, error) {
		tr := s.Transport()
		defer tr.CloseIdleConnections()
		resp, err := tr.RoundTrip(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}

	req, err := http.NewRequest(http.MethodPost, s.URL, io.NopCloser(bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	resp, err := send(req)
	if err == nil {
		t.Fatalf("a body without GetBody went through a refusing connection: %s", resp.Status)
	}
	if !strings.Contains(err.Error(), "GOAWAY") || !strings.Contains(err.Error(), "GetBody") {
		t.Errorf("error %q, want the HTTP/2 transport's GOAWAY error that names GetBody", err)
	}

	var replays atomic.Int64
	for i := range 2 { // on connections 2 and 3 (+ 4): one of them refuses, and the replay goes through
		req, err := http.NewRequest(http.MethodPost, s.URL, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		getBody := req.GetBody
		req.GetBody = func() (io.ReadCloser, error) { replays.Add(1); return getBody() }
		resp, err := send(req)
		if err != nil {
			t.Fatalf("request %d with GetBody: %v", i, err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Errorf("request %d: %s", i, resp.Status)
		}
	}
	if n := replays.Load(); n < 1 {
		t.Errorf("GetBody called %d times over a refusing connection, want at least 1", n)
	}
	// The first connection refused; of the next two each request opened,
	// one refused. (Go 1.27's client may also open one for the first
	// request's retry before it finds it cannot replay the body.)
	if g := s.Goaways(); g < 2 {
		t.Errorf("Goaways = %d, want at least 2", g)
	}
}

// A picked connection that the client closes without sending a stream, as
// Go's HTTP/2 client closes the connections it dialled for a burst and did
// not keep, passes its turn on: the next connection refuses instead.
func TestServerRefuseTurnPassesOn(t *testing.T) {
	s := proxytest.NewServer(&conns{addrs: map[string]bool{}}, proxytest.Options{RefuseEvery: 2})
	defer s.Close()

	// Connection 0, picked: the preface and the server's SETTINGS, then
	// close_notify, and read to EOF, which the server sends once it gave
	// up its turn.
	cfg := s.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.NextProtos = []string{http2.NextProtoTLS}
	c, err := tls.Dial("tcp", s.Listener.Addr().String(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	if f, err := fr.ReadFrame(); err != nil {
		t.Fatal(err)
	} else if _, ok := f.(*http2.SettingsFrame); !ok {
		t.Fatalf("first frame %v, want SETTINGS", f)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatal(err)
	}

	// Connection 1 refuses in its place.
	tr := s.Transport()
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodPost, s.URL, io.NopCloser(strings.NewReader("refused")))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len("refused"))
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("the connection after an unused picked one served the request: %s", resp.Status)
	}
	if !strings.Contains(err.Error(), "GOAWAY") {
		t.Errorf("error %q, want the HTTP/2 transport's GOAWAY error", err)
	}
	if g := s.Goaways(); g != 1 {
		t.Errorf("Goaways = %d, want 1", g)
	}
}

// With RefuseAfter, a picked connection refuses only once the client has
// sent more than that many bytes of the body, past the flow-control window
// a server grants at first (64 KiB); a body shorter than that is refused
// when it ends.
func TestServerRefuseAfter(t *testing.T) {
	const after = 128 << 10
	s := proxytest.NewServer(&conns{addrs: map[string]bool{}}, proxytest.Options{RefuseEvery: 1, RefuseAfter: after})
	defer s.Close()
	tr := s.Transport()
	defer tr.CloseIdleConnections()

	for i, size := range []int{1 << 20, 10 << 10} {
		body := &countingReader{r: bytes.NewReader(make([]byte, size))}
		req, err := http.NewRequest(http.MethodPost, s.URL, io.NopCloser(body))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = int64(size)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("a %d-byte body went through a refusing connection: %s", size, resp.Status)
		}
		if !strings.Contains(err.Error(), "GOAWAY") {
			t.Errorf("%d-byte body: error %q, want the HTTP/2 transport's GOAWAY error", size, err)
		}
		// The upstream had more than after bytes, or all of them, so the
		// client had read them.
		if n := body.n.Load(); n <= after && n != int64(size) {
			t.Errorf("%d-byte body: refused after the client read %d bytes, want more than %d or all", size, n, after)
		}
		if g := s.Goaways(); g != int64(i+1) {
			t.Errorf("Goaways = %d after %d requests, want %d", g, i+1, i+1)
		}
	}
}

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
