package transport_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
)

// Fact 7, the part the Tee relies on when its filler closes a source that
// returned io.EOF: a server's request body closed after io.EOF, from another
// goroutine while the handler runs, costs nothing. Over HTTP/1.1 the
// connection stays open and serves the next request, whose body arrives
// whole, with a Content-Length, after Expect: 100-continue, or chunked; over
// HTTP/2 the streams end normally on one connection. If a Go release made
// such a Close end the connection or drop bytes, this test says so.
func TestFactServerBodyClosedAfterEOF(t *testing.T) {
	for _, h1 := range []bool{true, false} {
		t.Run(map[bool]string{true: "HTTP/1.1", false: "HTTP/2"}[h1], func(t *testing.T) {
			s := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, err := io.ReadAll(r.Body)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				closed := make(chan struct{})
				go func() { r.Body.Close(); close(closed) }() // as the filler does
				<-closed
				fmt.Fprintf(w, "%d %x", len(b), sha256.Sum256(b))
			}), proxytest.Options{HTTP1: h1})
			tr := transportTo(t, s)
			tr.ExpectContinueTimeout = time.Minute // wait for the server's 100 Continue

			var conns []string // the local address of the connection of each request
			rng := rand.New(rand.NewPCG(7, 7))
			for _, kind := range []string{"Content-Length", "Expect: 100-continue", "chunked", "Content-Length"} {
				body := make([]byte, 100<<10)
				for i := range body {
					body[i] = byte(rng.Uint32())
				}
				var rd io.Reader = bytes.NewReader(body)
				if kind == "chunked" {
					rd = hiddenReader{rd}
				}
				req, err := http.NewRequest(http.MethodPost, s.URL, rd)
				if err != nil {
					t.Fatal(err)
				}
				if kind == "Expect: 100-continue" {
					req.Header.Set("Expect", "100-continue")
				}
				req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
					GotConn: func(info httptrace.GotConnInfo) { conns = append(conns, info.Conn.LocalAddr().String()) },
				}))
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatalf("%s: %v", kind, err)
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if want := fmt.Sprintf("%d %x", len(body), sha256.Sum256(body)); err != nil || string(got) != want {
					t.Fatalf("%s: the server read %q (%v), want %q", kind, got, err, want)
				}
			}
			for i, c := range conns {
				if c != conns[0] {
					t.Errorf("request %d went over a new connection (%s, first %s): the server ended the one before", i, c, conns[0])
				}
			}
			if len(conns) != 4 {
				t.Errorf("%d connections traced for 4 requests", len(conns))
			}
		})
	}
}
