package transport_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"testing/synctest"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// earlyEmpty is an upstream that answers before it reads the body
// (answerEarly), then reads the body and applies it only if it arrived
// whole (hdrSum, hdrLen).
type earlyEmpty struct {
	status  int
	gate    chan struct{} // if non-nil, the handler waits for it after flushing, before reading
	applied atomic.Int64  // bodies that arrived whole
	cut     atomic.Int64  // bodies that ended in an error or arrived wrong
	handled chan struct{} // one value per request, once its handler is done with the body
}

func newEarlyEmpty(status int) *earlyEmpty {
	return &earlyEmpty{status: status, handled: make(chan struct{}, 16)}
}

func (u *earlyEmpty) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() { u.handled <- struct{}{} }()
	answerEarly(w, r, u.status)
	if u.gate != nil {
		<-u.gate
	}
	h := sha256.New()
	n, err := io.Copy(h, r.Body)
	if err != nil || hex.EncodeToString(h.Sum(nil)) != r.Header.Get(hdrSum) || strconv.FormatInt(n, 10) != r.Header.Get(hdrLen) {
		u.cut.Add(1)
		return
	}
	u.applied.Add(1)
}

// streamedRequest returns a POST of data to target with an unknown length,
// its body a plain reader, as a client streaming an upload sends it: no
// GetBody, so only teebody can replay it.
func streamedRequest(t testing.TB, target string, data []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, struct{ io.Reader }{bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	req.Header.Set(hdrSum, hex.EncodeToString(sum[:]))
	req.Header.Set(hdrLen, strconv.Itoa(len(data)))
	return req
}

// gatedReader reads r once release is closed.
type gatedReader struct {
	release <-chan struct{}
	r       io.Reader
}

func (g gatedReader) Read(p []byte) (int, error) {
	<-g.release
	return g.r.Read(p)
}

// gatedRequest is streamedRequest whose body gives its first half at once
// and the rest only once release is closed: the upload is certainly not
// over when the response comes.
func gatedRequest(t testing.TB, target string, data []byte, release <-chan struct{}) *http.Request {
	req := streamedRequest(t, target, data)
	half := len(data) / 2
	req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(data[:half]), gatedReader{release, bytes.NewReader(data[half:])}))
	return req
}

// plainOrOurs is one half of a comparison with the plain transport: inner
// itself and no Transport, or a Transport over inner (quietConfig) as both.
func plainOrOurs(ours bool, inner http.RoundTripper) (http.RoundTripper, *transport.Transport) {
	if !ours {
		return inner, nil
	}
	tr := transport.New(inner, quietConfig())
	return tr, tr
}

// transportName names plainOrOurs' half in a subtest's name.
func transportName(ours bool) string {
	if ours {
		return "teebody"
	}
	return "plain"
}

// What a caller does with an early empty response.
const (
	neverCloses = "never-closes" // as a careless caller: the body stays open to the end of the test
	readsToEOF  = "reads-to-eof" // as httputil.ReverseProxy: reads the body to its end, then closes it
	closesFirst = "closes-first" // closes the body before the upstream reads a byte
)

// An upload answered early with an empty 2xx goes on after RoundTrip
// returned, as through the plain transport (Go's HTTP/2 transport keeps
// sending after a 1xx or 2xx, golang.org/issue/13444): the upstream gets
// the whole body and applies it once, the budget is back at 0 once the
// upload ended, and a caller that never closes the empty response leaks
// nothing (goleak in TestMain). A caller that closes an open HTTP/2
// response aborts its stream, and with it the upload, through the plain
// transport as through ours. A 304 (> 299) makes the transport stop
// sending: there too ours does what the plain one does.
func TestEarlyEmptyResponseUploadGoesOn(t *testing.T) {
	data := uniformBodies(7, 1, 2<<20, 2<<20)[0].data
	for _, status := range []int{http.StatusOK, http.StatusNoContent, http.StatusNotModified} {
		for _, caller := range []string{neverCloses, readsToEOF, closesFirst} {
			if caller == readsToEOF && status > 299 {
				// The transport stops sending without ending the stream
				// and the upstream waits for the rest of the body: the
				// response never ends, through the plain transport too.
				continue
			}
			for _, ours := range []bool{false, true} {
				t.Run(strconv.Itoa(status)+"/"+caller+"/"+transportName(ours), func(t *testing.T) {
					up := newEarlyEmpty(status)
					if caller == closesFirst {
						up.gate = make(chan struct{})
					}
					srv := serve(t, up, proxytest.Options{})
					rt, tr := plainOrOurs(ours, transportTo(t, srv))
					release := make(chan struct{})
					resp, err := (&http.Client{Transport: rt}).Do(gatedRequest(t, srv.URL, data, release))
					if err != nil {
						t.Fatal(err)
					}
					close(release) // the second half of the upload goes after the response
					if resp.StatusCode != status || resp.ContentLength > 0 {
						t.Fatalf("status %d, length %d; want %d, empty", resp.StatusCode, resp.ContentLength, status)
					}
					switch caller {
					case neverCloses:
						t.Cleanup(func() { resp.Body.Close() })
					case readsToEOF:
						if _, err := io.Copy(io.Discard, resp.Body); err != nil {
							t.Errorf("reading the empty response: %v", err)
						}
						resp.Body.Close()
					case closesFirst:
						resp.Body.Close()
						close(up.gate)
					}
					want := int64(1)
					if caller == closesFirst || status > 299 {
						want = 0
					}
					if caller == neverCloses && status > 299 {
						// The transport stopped sending without ending the
						// stream, so the upstream waits for the rest of the
						// body until the caller closes the response; the
						// request ends without that (the transport closed the
						// body), so Drain returns first.
						if tr != nil {
							drain(t, tr)
						}
						resp.Body.Close()
					}
					<-up.handled
					if got := up.applied.Load(); got != want {
						t.Errorf("upstream applied the upload %d times (%d cut); want %d, as through the plain transport", got, up.cut.Load(), want)
					}
					if tr != nil {
						drain(t, tr)
						if st := tr.Stats(); st.Buffered != 1 {
							t.Errorf("buffered %d; want 1", st.Buffered)
						}
					}
				})
			}
		}
	}
}

// Through httputil.ReverseProxy, which reads an empty response to its end
// and closes it before its handler returns: the upload answered early goes
// on to the upstream and is applied once.
func TestEarlyEmptyResponseThroughReverseProxy(t *testing.T) {
	data := uniformBodies(8, 1, 2<<20, 2<<20)[0].data
	up := newEarlyEmpty(http.StatusOK)
	upSrv := serve(t, up, proxytest.Options{})
	target, err := url.Parse(upSrv.URL)
	if err != nil {
		t.Fatal(err)
	}
	tr := transport.New(transportTo(t, upSrv), quietConfig())
	rp := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: tr,
		ErrorLog:  proxytest.QuietLog(),
	}
	front := serve(t, rp, proxytest.Options{})
	resp, err := (&http.Client{Transport: transportTo(t, front)}).Do(streamedRequest(t, front.URL, data))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d; want 200", resp.StatusCode)
	}
	<-up.handled
	if got := up.applied.Load(); got != 1 {
		t.Errorf("upstream applied the upload %d times (%d cut); want 1", got, up.cut.Load())
	}
	drain(t, tr)
}

// Over HTTP/1 (a full-duplex upstream on in-memory connections, on the
// synctest clock): an early empty 200 while the client still writes the
// upload, which net/http's transport goes on writing: the upstream applies
// it once through ours as through the plain transport, and the budget is
// back at 0 without the caller closing the response. (net/http hands out
// such a response only once the body is written, or 50 ms later on a
// connection it then closes: TestFactEarlyEmptyH1. So over HTTP/1 the
// body is at its end, or doomed, by the time RoundTrip returns, and ending
// the request at once never cut an upload that the plain transport
// delivered; this pins that it still does not.)
func TestEarlyEmptyResponseHTTP1(t *testing.T) {
	data := uniformBodies(9, 1, 2<<20, 2<<20)[0].data
	for _, ours := range []bool{false, true} {
		t.Run(transportName(ours), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				up := newEarlyEmpty(http.StatusOK)
				url, inner := memServe(t, up)
				rt, tr := plainOrOurs(ours, inner)
				resp, err := rt.RoundTrip(streamedRequest(t, url, data))
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != http.StatusOK || resp.Body != http.NoBody {
					t.Fatalf("status %d, body %T; want 200, http.NoBody", resp.StatusCode, resp.Body)
				}
				<-up.handled
				if got := up.applied.Load(); got != 1 {
					t.Errorf("upstream applied the upload %d times (%d cut); want 1", got, up.cut.Load())
				}
				if tr != nil {
					drain(t, tr)
				}
			})
		})
	}
}

// A source that fails mid-upload after an early empty 200: the transport
// stops sending, the upstream does not apply the body, through ours as
// through the plain transport, and the request ends (budget back) without
// the caller closing the response.
func TestEarlyEmptyResponseSourceFails(t *testing.T) {
	data := uniformBodies(10, 1, 2<<20, 2<<20)[0].data
	gone := errors.New("client went away")
	for _, ours := range []bool{false, true} {
		t.Run(transportName(ours), func(t *testing.T) {
			up := newEarlyEmpty(http.StatusOK)
			srv := serve(t, up, proxytest.Options{})
			rt, tr := plainOrOurs(ours, transportTo(t, srv))
			req := streamedRequest(t, srv.URL, data)
			release := make(chan struct{})
			req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(data[:1<<20]), gatedReader{release, iotest.ErrReader(gone)}))
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			close(release) // the source fails after the response came
			t.Cleanup(func() { resp.Body.Close() })
			<-up.handled
			if got, cut := up.applied.Load(), up.cut.Load(); got != 0 || cut != 1 {
				t.Errorf("upstream applied %d, cut %d; want 0, 1", got, cut)
			}
			if tr != nil {
				drain(t, tr)
			}
		})
	}
}

// abandonedBody is a request body that records its Close.
type abandonedBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *abandonedBody) Close() error { b.closed.Store(true); return nil }

// An inner RoundTripper that answers with an empty response and neither
// reads nor closes the body (which the http.RoundTripper contract forbids)
// holds the request open until its context is done: then the request ends,
// the source is closed and Drain returns.
func TestEmptyResponseAbandonedBodyEndsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
		})
		tr := transport.New(inner, quietConfig())
		ctx, cancel := context.WithCancel(t.Context())
		src := &abandonedBody{Reader: bytes.NewReader(make([]byte, 64<<10))}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://upstream.test/", src)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		synctest.Wait()
		if src.closed.Load() {
			t.Fatal("the source was closed while the inner transport still held its body")
		}
		early, stop := context.WithCancel(t.Context())
		stop()
		if err := tr.Drain(early); err == nil {
			t.Fatal("Drain returned while the inner transport still held the body")
		}
		cancel()
		synctest.Wait()
		if !src.closed.Load() {
			t.Error("the source is still open after the request's context ended")
		}
		drain(t, tr)
	})
}

// A HEAD with a body, answered early: Go's HTTP/2 server ends the stream
// with the headers and resets it, so the upload is cut through the plain
// transport and through ours alike, and the request ends without the
// caller closing the response.
func TestEarlyEmptyResponseToHead(t *testing.T) {
	data := uniformBodies(11, 1, 2<<20, 2<<20)[0].data
	for _, ours := range []bool{false, true} {
		t.Run(transportName(ours), func(t *testing.T) {
			up := newEarlyEmpty(http.StatusOK)
			srv := serve(t, up, proxytest.Options{})
			rt, tr := plainOrOurs(ours, transportTo(t, srv))
			release := make(chan struct{})
			req := gatedRequest(t, srv.URL, data, release)
			req.Method = http.MethodHead
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			close(release)
			t.Cleanup(func() { resp.Body.Close() })
			<-up.handled
			if got := up.applied.Load(); got != 0 {
				t.Errorf("upstream applied the HEAD's body %d times; want 0, as through the plain transport", got)
			}
			if tr != nil {
				drain(t, tr)
			}
		})
	}
}
