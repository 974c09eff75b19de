package http3_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// closingUpstream is an HTTP/3 upstream that applies every request it reads
// in full and then, instead of answering, closes the connection with code
// and a reason phrase of its choice: the shape of an upstream that
// processed a write and then went away.
type closingUpstream struct {
	addr    string
	applied atomic.Int64

	mu    sync.Mutex
	conns map[string]*quic.Conn // by the client's address
}

func newClosingUpstream(t *testing.T, code http3.ErrCode, reason string) *closingUpstream {
	cert, _ := testCert(t)
	u := &closingUpstream{conns: make(map[string]*quic.Conn)}
	srv := &http3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, "short body", http.StatusBadRequest)
			return
		}
		u.applied.Add(1)
		u.mu.Lock()
		conn := u.conns[r.RemoteAddr]
		u.mu.Unlock()
		conn.CloseWithError(quic.ApplicationErrorCode(code), reason)
	})}
	pc, err := net.ListenUDP("udp", loopback)
	if err != nil {
		t.Fatal(err)
	}
	tr := &quic.Transport{Conn: pc}
	ln, err := tr.Listen(http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}}), &quic.Config{})
	if err != nil {
		pc.Close()
		t.Fatal(err)
	}
	u.addr = pc.LocalAddr().String()
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			conn, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			u.mu.Lock()
			u.conns[conn.RemoteAddr().String()] = conn
			u.mu.Unlock()
			wg.Go(func() { srv.ServeQUICConn(conn) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		srv.Close()
		u.mu.Lock()
		for _, c := range u.conns {
			c.CloseWithError(0, "")
		}
		u.mu.Unlock()
		wg.Wait()
		tr.Close()
		pc.Close()
	})
	return u
}

// The texts that some part of teebody once looked for anywhere in an
// error's text, as proof that the upstream did not process the request.
var provingTexts = []string{
	"H3_REQUEST_REJECTED",
	"http3: parsing frame failed: H3_REQUEST_REJECTED",
	"conn unusable: connection in graceful shutdown",
	"http3: conn unusable: connection in graceful shutdown",
	"after Request.Body was written; define Request.GetBody to avoid this error",
	"cannot rewind body after connection loss",
	"ReverseProxy does an invalid Read on closed Body",
	"http: invalid Read on closed Body",
	"body closed by handler",
	"teebody: body is not replayable",
}

// TestProcessedNeverTwice: an HTTP/3 upstream that applied a write and
// then closed its connection with any of the texts once taken for proof as
// its reason phrase sees the write once, and the proxy's client gets 502,
// never 429. quic-go's error quotes the reason phrase; teebody knows
// quic-go's errors by their type and code only.
func TestProcessedNeverTwice(t *testing.T) {
	for _, code := range []http3.ErrCode{http3.ErrCodeNoError, http3.ErrCodeInternalError} {
		for _, text := range provingTexts {
			t.Run(code.String()+"/"+text, func(t *testing.T) {
				u := newClosingUpstream(t, code, text)
				cfg := transport.DefaultConfig()
				cfg.ErrorLog = proxytest.QuietLog()
				tr := transport.New(newClient(t, &dialer{}), cfg)
				target := &url.URL{Scheme: "https", Host: u.addr}
				front := httptest.NewServer(&httputil.ReverseProxy{
					Rewrite:      func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
					Transport:    tr,
					ErrorHandler: tr.ErrorHandler,
				})
				defer front.Close()
				client := front.Client()
				defer client.CloseIdleConnections()
				resp, err := client.Post(front.URL, "application/octet-stream", io.MultiReader(strings.NewReader(strings.Repeat("w", 1<<10))))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
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
