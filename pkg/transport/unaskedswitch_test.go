package transport_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// TestUnaskedSwitchStaysWritable: an HTTP/1 upstream answers a buffered
// POST, which asked for no upgrade, with 101 Switching Protocols. net/http
// hands back a writable body whatever the request asked. A 101 has no
// content, so the Transport hands that body back as it came: bytes flow both
// ways, and the request is over once its body was sent.
func TestUnaskedSwitchStaysWritable(t *testing.T) {
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, err := io.ReadAll(r.Body); err != nil || string(b) != "hello" {
			http.Error(w, "want the body hello", http.StatusBadRequest)
			return
		}
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: unasked\r\nConnection: Upgrade\r\n\r\n")
		buf.Flush()
		line, err := buf.ReadString('\n')
		if err != nil {
			return
		}
		buf.WriteString("echo: " + line)
		buf.Flush()
	}), proxytest.Options{HTTP1: true})
	tr := transport.New(h1Client(t), quietConfig())

	req, err := http.NewRequest(http.MethodPost, up.URL, hiddenReader{strings.NewReader("hello")})
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 5
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		resp.Body.Close()
		t.Fatalf("status %s, want 101", resp.Status)
	}
	rw, ok := resp.Body.(io.ReadWriter)
	if !ok {
		resp.Body.Close()
		t.Fatalf("101 body %T is not writable", resp.Body)
	}
	if _, err := io.WriteString(rw, "ping\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(rw).ReadString('\n')
	if err != nil || line != "echo: ping\n" {
		t.Errorf("read %q, %v over the switched connection", line, err)
	}
	resp.Body.Close()
	if st := tr.Stats(); st.Buffered != 1 {
		t.Errorf("Stats().Buffered = %d, want 1: a request that asks for no upgrade is buffered", st.Buffered)
	}
	drain(t, tr)
}

// TestWritableBodyStaysWritable: an inner RoundTripper of another kind
// answers with content in a body that is also an io.Writer. The Transport's
// body is one too, and writes reach the inner body.
func TestWritableBodyStaysWritable(t *testing.T) {
	body := &rwBody{Reader: strings.NewReader("answer")}
	inner := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return nil, err
		}
		return &http.Response{StatusCode: http.StatusOK, ContentLength: -1, Body: body}, nil
	})
	tr := transport.New(inner, quietConfig())
	req, err := http.NewRequest(http.MethodPost, "http://upstream.invalid/", hiddenReader{strings.NewReader("hello")})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	rw, ok := resp.Body.(io.ReadWriter)
	if !ok {
		resp.Body.Close()
		t.Fatalf("body %T is not writable", resp.Body)
	}
	if _, err := io.WriteString(rw, "ping"); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := body.written.String(); got != "ping" {
		t.Errorf("the inner body was written %q, want %q", got, "ping")
	}
	drain(t, tr)
}

// rwBody is a response body that is also an io.Writer, keeping what it is
// written.
type rwBody struct {
	io.Reader
	written bytes.Buffer
}

func (b *rwBody) Write(p []byte) (int, error) { return b.written.Write(p) }
func (b *rwBody) Close() error                { return nil }
