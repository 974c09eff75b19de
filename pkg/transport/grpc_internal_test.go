package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/teebody/teebody/pkg/teebody"
)

// errGRPCUpstream is an error whose text names what no answer may show.
var errGRPCUpstream = errors.New("dial tcp 10.96.0.1:6443: connect: connection refused")

// TestGRPCAnswers: ErrorHandler and Responder answer a gRPC request with
// HTTP 200, no body, grpc-status 14 and a message of plain words; a retry
// later carries Config.RetryAfter in milliseconds as grpc-retry-pushback-ms.
// Any other request keeps its answer. Stats counts each as before, and only
// the 502 case is logged.
func TestGRPCAnswers(t *testing.T) {
	retryLater := fmt.Errorf("round trip 10.96.0.1:6443: %w", teebody.ErrNotReplayable)
	for _, tc := range []struct {
		name        string
		contentType string
		path        string
		responder   bool
		err         error
		retryAfter  time.Duration
		wantCode    int
		wantMsg     string // the grpc-message, decoded; "" for an answer that is not gRPC
		wantPush    string
	}{
		{"grpc retry later", "application/grpc", "/pkg.Svc/Call", false, retryLater, 0, 200, grpcMsgRetryLater, "1000"},
		{"grpc+proto retry later", "application/grpc+proto", "/pkg.Svc/Call", false, retryLater, 250 * time.Millisecond, 200, grpcMsgRetryLater, "250"},
		{"grpc;params retry later", "application/grpc;proto=x", "/pkg.Svc/Call", false, retryLater, 1500 * time.Microsecond, 200, grpcMsgRetryLater, "2"},
		{"grpc under /api", "application/grpc", "/api/v1/x", false, retryLater, 3 * time.Second, 200, grpcMsgRetryLater, "3000"},
		{"grpc bad gateway", "application/grpc", "/pkg.Svc/Call", false, errGRPCUpstream, 0, 200, grpcMsgBadGateway, ""},
		{"grpc+json bad gateway", "application/grpc+json", "/pkg.Svc/Call", false, errGRPCUpstream, time.Second, 200, grpcMsgBadGateway, ""},
		{"responder grpc retry later", "application/grpc", "/pkg.Svc/Call", true, retryLater, 2 * time.Second, 200, grpcMsgRetryLater, "2000"},
		{"responder grpc bad gateway", "application/grpc", "/pkg.Svc/Call", true, errGRPCUpstream, 0, 200, grpcMsgBadGateway, ""},
		{"grpc-web is not grpc", "application/grpc-web", "/pkg.Svc/Call", false, retryLater, 0, 429, "", ""},
		{"grpcx is not grpc", "application/grpcx", "/pkg.Svc/Call", false, errGRPCUpstream, 0, 502, "", ""},
		{"upper case is not grpc", "APPLICATION/GRPC", "/pkg.Svc/Call", false, retryLater, 0, 429, "", ""},
		{"json", "application/json", "/upload", false, retryLater, 0, 429, "", ""},
		{"no content type", "", "/upload", false, errGRPCUpstream, 0, 502, "", ""},
		{"responder json", "application/json", "/upload", true, errGRPCUpstream, 0, 502, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged bytes.Buffer
			cfg := DefaultConfig()
			cfg.RetryAfter = tc.retryAfter
			cfg.ErrorLog = log.New(&logged, "", 0)
			tr := New(nil, cfg)
			req := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader("x"))
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			rec := httptest.NewRecorder()
			if tc.responder {
				tr.Responder().Error(rec, req, tc.err)
			} else {
				tr.ErrorHandler(rec, req, tc.err)
			}
			res := rec.Result()
			if res.StatusCode != tc.wantCode {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.wantCode)
			}
			for _, vs := range res.Header {
				for _, v := range vs {
					if strings.Contains(v, "10.96.0.1") || strings.Contains(v, "dial") || strings.Contains(v, "teebody") {
						t.Errorf("a header holds the error's text: %q", v)
					}
				}
			}
			if tc.wantMsg != "" {
				checkGRPCAnswer(t, res, rec.Body.Len(), tc.contentType, tc.wantMsg, tc.wantPush)
			} else if res.Header.Get("Grpc-Status") != "" {
				t.Errorf("a request of Content-Type %q got grpc-status %q", tc.contentType, res.Header.Get("Grpc-Status"))
			}

			retry := ShouldRetryLater(tc.err)
			st := tr.Stats()
			if want := map[bool]int64{true: 1}[retry]; st.RetryLaterWritten != want || st.BadGatewayWritten != 1-want {
				t.Errorf("RetryLaterWritten, BadGatewayWritten = %d, %d; want %d, %d", st.RetryLaterWritten, st.BadGatewayWritten, want, 1-want)
			}
			if logged.Len() != 0 && retry {
				t.Errorf("a retry later was logged: %q", logged.String())
			}
			if want := "http: proxy error: " + tc.err.Error() + "\n"; !retry && logged.String() != want {
				t.Errorf("logged %q, want %q", logged.String(), want)
			}
		})
	}
}

// checkGRPCAnswer checks a trailers-only gRPC answer of UNAVAILABLE: HTTP
// 200, a body of bodyLen 0, the request's Content-Type, grpc-status 14, the
// grpc-message msg (percent-encoded) and the pushback push ("": none).
func checkGRPCAnswer(t *testing.T, res *http.Response, bodyLen int, contentType, msg, push string) {
	t.Helper()
	if res.StatusCode != http.StatusOK || bodyLen != 0 {
		t.Errorf("status %d with %d bytes of body, want 200 and none", res.StatusCode, bodyLen)
	}
	if got := res.Header.Get("Content-Type"); got != contentType {
		t.Errorf("Content-Type %q, want the request's %q", got, contentType)
	}
	if got := res.Header.Get("Grpc-Status"); got != "14" {
		t.Errorf("grpc-status %q, want 14 (UNAVAILABLE)", got)
	}
	enc := res.Header.Get("Grpc-Message")
	if got, err := url.PathUnescape(enc); err != nil || got != msg {
		t.Errorf("grpc-message %q decodes to %q (%v), want %q", enc, got, err, msg)
	}
	if got := res.Header.Get("Grpc-Retry-Pushback-Ms"); got != push {
		t.Errorf("grpc-retry-pushback-ms %q, want %q", got, push)
	}
	if len(res.Trailer) != 0 {
		t.Errorf("trailers %v, want none: the status travels in the headers", res.Trailer)
	}
}

// TestGRPCTrailersOnly: through Go's HTTP/2 server, each answer is a
// trailers-only response, as gRPC defines it: one HEADERS frame that ends
// the stream, with :status 200 and the gRPC status, and no DATA frame.
func TestGRPCTrailersOnly(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ErrorLog = log.New(io.Discard, "", 0)
	tr := New(nil, cfg)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/retry" {
			tr.ErrorHandler(w, r, teebody.ErrNotReplayable)
			return
		}
		tr.ErrorHandler(w, r, errGRPCUpstream)
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second)) // a bound, not a wait
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct{ path, msg, push string }{
		{"/retry", grpcMsgRetryLater, "1000"},
		{"/other", grpcMsgBadGateway, ""},
	} {
		id := uint32(2*i + 1)
		var block bytes.Buffer
		enc := hpack.NewEncoder(&block)
		for _, f := range [][2]string{
			{":method", "POST"}, {":scheme", "http"}, {":authority", "example.com"}, {":path", tc.path},
			{"content-type", "application/grpc"}, {"te", "trailers"},
		} {
			_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
		if err := fr.WriteData(id, true, []byte{0, 0, 0, 0, 0}); err != nil {
			t.Fatal(err)
		}
		var h *http2.MetaHeadersFrame
		for h == nil {
			f, err := fr.ReadFrame()
			if err != nil {
				t.Fatalf("%s: %v", tc.path, err)
			}
			switch f := f.(type) {
			case *http2.MetaHeadersFrame:
				if f.StreamID == id {
					h = f
				}
			case *http2.DataFrame:
				if f.StreamID == id {
					t.Fatalf("%s: a DATA frame before the headers", tc.path)
				}
			}
		}
		if !h.StreamEnded() {
			t.Errorf("%s: the HEADERS frame does not end the stream", tc.path)
		}
		res := &http.Response{Header: http.Header{}}
		for _, f := range h.RegularFields() {
			res.Header.Add(f.Name, f.Value)
		}
		if res.StatusCode, err = strconv.Atoi(h.PseudoValue("status")); err != nil {
			t.Fatalf("%s: :status %q", tc.path, h.PseudoValue("status"))
		}
		checkGRPCAnswer(t, res, 0, "application/grpc", tc.msg, tc.push)
	}
}

// TestGRPCPercentEncode: grpc-message keeps printable ASCII but '%', and
// encodes every other byte as '%' and two upper-case hex digits.
func TestGRPCPercentEncode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain words; try again later", "plain words; try again later"},
		{"100% sure", "100%25 sure"},
		{"tab\tnew\nline", "tab%09new%0Aline"},
		{"~\x7f", "~%7F"},
		{"é", "%C3%A9"},
		{grpcMsgRetryLater, grpcMsgRetryLater},
		{grpcMsgBadGateway, grpcMsgBadGateway},
	} {
		if got := grpcPercentEncode(tc.in); got != tc.want {
			t.Errorf("grpcPercentEncode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
