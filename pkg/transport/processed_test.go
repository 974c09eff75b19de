package transport_test

import (
	"bytes"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// processingUpstream is an HTTP/2 upstream that applies every request it
// reads in full, and then, instead of answering, does what its end says:
// the shape of an upstream that processed a write and then went away.
type processingUpstream struct {
	srv     *httptest.Server
	applied atomic.Int64
	// end ends stream id of fr's connection after the request was applied.
	// It returns false to close the connection.
	end func(fr *http2.Framer, id uint32, n int64) bool

	wg    sync.WaitGroup // the goroutines serving connections
	mu    sync.Mutex
	conns map[net.Conn]bool // guarded by mu: the connections being served
}

// newProcessingUpstream starts a processingUpstream on loopback.
func newProcessingUpstream(t *testing.T, end func(fr *http2.Framer, id uint32, n int64) bool) *processingUpstream {
	u := &processingUpstream{end: end, conns: make(map[net.Conn]bool)}
	u.srv = httptest.NewUnstartedServer(http.NotFoundHandler())
	u.srv.EnableHTTP2 = true
	u.srv.StartTLS() // for its certificate, its TLS config and its client
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.srv.URL = "https://" + ln.Addr().String()
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			u.conns[c] = true
			u.mu.Unlock()
			u.wg.Go(func() {
				defer func() {
					u.mu.Lock()
					delete(u.conns, c)
					u.mu.Unlock()
					c.Close()
				}()
				u.serve(tls.Server(c, u.srv.TLS))
			})
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-accepting
		u.srv.Close()
		u.mu.Lock()
		for c := range u.conns {
			c.Close() // a client may keep a connection open
		}
		u.mu.Unlock()
		u.wg.Wait()
	})
	return u
}

// serve speaks HTTP/2 on tc: it reads each stream's body to its end,
// counts the request as applied and hands the stream to end.
func (u *processingUpstream) serve(tc *tls.Conn) {
	if tc.Handshake() != nil || tc.ConnectionState().NegotiatedProtocol != http2.NextProtoTLS {
		return
	}
	_ = proxytest.ServeFrames(tc, func(fr *http2.Framer, f http2.Frame) bool {
		ended := false
		switch f := f.(type) {
		case *http2.HeadersFrame:
			ended = f.StreamEnded()
		case *http2.DataFrame:
			ended = f.StreamEnded()
		}
		return !ended || u.end(fr, f.Header().StreamID, u.applied.Add(1))
	})
}

// goAwayAfter ends a stream with a GOAWAY that covers it, with debug data,
// and closes the connection: the upstream may have processed the stream,
// as it did.
func goAwayAfter(debug string) func(*http2.Framer, uint32, int64) bool {
	return func(fr *http2.Framer, id uint32, _ int64) bool {
		fr.WriteGoAway(id, http2.ErrCodeNo, []byte(debug))
		return false
	}
}

// answerOK answers stream id with an empty 200.
func answerOK(fr *http2.Framer, id uint32) bool {
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	enc.WriteField(hpack.HeaderField{Name: "content-length", Value: "0"})
	return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(),
		EndHeaders: true, EndStream: true}) == nil
}

// The texts that some part of the code once looked for anywhere in an
// error's text, as proof that the upstream did not process the request.
// A peer can put each where an error quotes it.
var provingTexts = []string{
	"H3_REQUEST_REJECTED",
	"conn unusable: connection in graceful shutdown",
	"after Request.Body was written; define Request.GetBody to avoid this error",
	"http2: Transport: cannot retry err [http2: Transport received Server's graceful shutdown GOAWAY] " +
		"after Request.Body was written; define Request.GetBody to avoid this error",
	"cannot rewind body after connection loss",
	"net/http: cannot rewind body after connection loss",
	"ReverseProxy does an invalid Read on closed Body",
	"http: invalid Read on closed Body",
	"body closed by handler",
	"teebody: body is not replayable",
	"error trying to reach service: teebody: body is not replayable",
}

// TestProcessedNeverTwice: an upstream that applied a write and then sent
// a GOAWAY covering its stream, with any of the texts once taken for proof
// as its debug data, sees the write once, and the proxy's client gets 502,
// never 429. Through the Transport alone, and through a wrapping
// RoundTripper that quotes the upstream's error in a message of its own.
func TestProcessedNeverTwice(t *testing.T) {
	for _, text := range provingTexts {
		for _, wrapped := range []bool{false, true} {
			name := text
			if wrapped {
				name += "/wrapped"
			}
			t.Run(name, func(t *testing.T) {
				u := newProcessingUpstream(t, goAwayAfter(text))
				var inner http.RoundTripper = u.srv.Client().Transport
				if wrapped {
					inner = quotingTransport{inner}
				}
				tr := transportOver(inner)
				target, _ := url.Parse(u.srv.URL)
				f := proxyFront(t, target, tr, tr.ErrorHandler)
				resp, _ := f.post(t, "/write", strings.Repeat("w", 1<<10))
				if n := u.applied.Load(); n != 1 {
					t.Errorf("the upstream applied the write %d times, want once", n)
				}
				if resp.StatusCode != http.StatusBadGateway {
					t.Errorf("the client got %d, want 502", resp.StatusCode)
				}
				if st := tr.Stats(); st.ReplaysServed != 0 || st.RetryLaterWritten != 0 {
					t.Errorf("replays served %d, 429s %d; want none", st.ReplaysServed, st.RetryLaterWritten)
				}
			})
		}
	}
}

// transportOver returns a Transport with the default Config over inner,
// which logs nothing.
func transportOver(inner http.RoundTripper) *transport.Transport {
	cfg := transport.DefaultConfig()
	cfg.ErrorLog = proxytest.QuietLog()
	return transport.New(inner, cfg)
}

// quotingTransport is a RoundTripper between the Transport and the
// upstream's that quotes the upstream's errors in a message of its own.
type quotingTransport struct{ rt http.RoundTripper }

func (q quotingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := q.rt.RoundTrip(req)
	if err != nil {
		return nil, &quotedError{"mesh: the upstream failed: " + err.Error()}
	}
	return resp, nil
}

type quotedError struct{ msg string }

func (e *quotedError) Error() string { return e.msg }
