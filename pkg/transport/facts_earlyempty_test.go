package transport_test

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
)

// pipeBody is a request body that the test writes into, recording when a
// Read was first called, when a Read first returned io.EOF and when it was
// closed (and whether a Read was pending then).
type pipeBody struct {
	pr *io.PipeReader
	pw *io.PipeWriter

	mu      sync.Mutex
	pending int // Reads in progress; guarded by mu

	reading     chan struct{} // closed when the first Read begins
	eof, closed chan struct{} // closed at the first io.EOF, the first Close
	readingOnce sync.Once
	eofOnce     sync.Once
	closeOnce   sync.Once
	inRead      bool // guarded by mu: the first Close came while a Read was pending
}

func newPipeBody() *pipeBody {
	pr, pw := io.Pipe()
	return &pipeBody{pr: pr, pw: pw, reading: make(chan struct{}), eof: make(chan struct{}), closed: make(chan struct{})}
}

func (b *pipeBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	b.pending++
	b.mu.Unlock()
	b.readingOnce.Do(func() { close(b.reading) })
	n, err := b.pr.Read(p)
	b.mu.Lock()
	b.pending--
	b.mu.Unlock()
	if err == io.EOF {
		b.eofOnce.Do(func() { close(b.eof) })
	}
	return n, err
}

func (b *pipeBody) Close() error {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.inRead = b.pending > 0
		b.mu.Unlock()
		close(b.closed)
	})
	return b.pr.Close()
}

// send writes data into the body and ends it, or returns early if the
// reader went away.
func (b *pipeBody) send(data []byte) {
	b.pw.Write(data)
	b.pw.Close()
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// answerEarly sends status with an empty body (Content-Length: 0 unless
// the status forbids a body) and flushes it before the handler reads the
// request body, its stream still open, as a full-duplex server does. Over
// HTTP/1 it turns full duplex on first: without it, net/http's HTTP/1
// server discards or refuses an unread body once the response starts.
func answerEarly(w http.ResponseWriter, r *http.Request, status int) {
	rc := http.NewResponseController(w)
	if r.ProtoMajor == 1 {
		if err := rc.EnableFullDuplex(); err != nil {
			panic(err)
		}
	}
	if status != http.StatusNotModified && status != http.StatusNoContent {
		w.Header().Set("Content-Length", "0")
	}
	w.WriteHeader(status)
	if err := rc.Flush(); err != nil {
		panic(err)
	}
}

// countingUpstream answers early (answerEarly) with status, then counts
// what it read of the request body and reports it on got.
func countingUpstream(status int, got chan<- int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answerEarly(w, r, status)
		n, _ := io.Copy(io.Discard, r.Body)
		got <- n
	})
}

// Go's HTTP/2 transport, answered early with an empty 200 on a stream the
// upstream keeps open, returns the response with a body of its own (not
// http.NoBody) and a ContentLength of 0, goes on sending the request body
// after RoundTrip returned (golang.org/issue/13444), and closes it once
// it read it to its end, without the caller closing the response. The
// transport's empty-response rule (Transport.RoundTrip) rests on this.
func TestFactEarlyEmptyH2KeepsSending(t *testing.T) {
	got := make(chan int64, 1)
	srv := serve(t, countingUpstream(http.StatusOK, got), proxytest.Options{})
	body := newPipeBody()
	req, err := http.NewRequest(http.MethodPost, srv.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := transportTo(t, srv).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ContentLength != 0 || resp.Body == http.NoBody {
		t.Errorf("length %d, body %T; want 0 and a body of the transport's own", resp.ContentLength, resp.Body)
	}
	if isClosed(body.closed) {
		t.Fatal("the request body was closed as the early response came")
	}
	data := bytes.Repeat([]byte("x"), 2<<20)
	body.send(data)
	<-body.eof
	<-body.closed // with the response body still open
	if n := <-got; n != int64(len(data)) {
		t.Errorf("the upstream read %d bytes; want %d", n, len(data))
	}
}

// After an early response above 299, Go's HTTP/2 transport stops sending
// and closes the request body by itself, while its Read is pending: the
// request's end does not wait for the caller. The upstream answers once
// the transport's Read of the body is pending.
func TestFactEarlyEmptyH2StopsAfter299(t *testing.T) {
	got := make(chan int64, 1)
	body := newPipeBody()
	upstream := countingUpstream(http.StatusNotModified, got)
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-body.reading
		upstream.ServeHTTP(w, r)
	}), proxytest.Options{})
	req, err := http.NewRequest(http.MethodPost, srv.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := transportTo(t, srv).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	<-body.closed
	body.mu.Lock()
	inRead := body.inRead
	body.mu.Unlock()
	if !inRead {
		t.Error("the request body was closed with no Read pending")
	}
	if isClosed(body.eof) {
		t.Error("the request body was read to its end")
	}
	resp.Body.Close() // resets the stream, so the upstream's read ends
	<-got
}

// Closing the open body of an early empty HTTP/2 response resets the
// stream: the request body is closed by the time Close returns, so the
// upload ends with it, through the plain transport as through ours.
func TestFactEarlyEmptyH2CloseEndsUpload(t *testing.T) {
	got := make(chan int64, 1)
	srv := serve(t, countingUpstream(http.StatusOK, got), proxytest.Options{})
	body := newPipeBody()
	req, err := http.NewRequest(http.MethodPost, srv.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := transportTo(t, srv).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !isClosed(body.closed) {
		t.Error("the request body was still open after the response body's Close returned")
	}
	if isClosed(body.eof) {
		t.Error("the request body was read to its end")
	}
	<-got
}

// Go's HTTP/1 transport, answered early with an empty response while it
// still writes the request body, goes on writing, and returns the response
// (http.NoBody) once the body is written or 50 ms have passed (net/http's
// maxWriteWaitBeforeConnReuse): a body that is there is written whole and
// then closed; one it cannot finish by then loses its connection, which the
// transport closes, so the next write fails and the transport closes the
// body. On the synctest clock here.
func TestFactEarlyEmptyH1(t *testing.T) {
	for _, stall := range []bool{false, true} {
		name := "whole"
		if stall {
			name = "stalled"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				got := make(chan int64, 1)
				url, tr := memServe(t, countingUpstream(http.StatusOK, got))
				body := newPipeBody()
				req, err := http.NewRequest(http.MethodPost, url, body)
				if err != nil {
					t.Fatal(err)
				}
				req.ContentLength = 2 << 20
				data := bytes.Repeat([]byte("x"), 2<<20)
				go func() {
					if stall {
						body.pw.Write(data[:1<<20])
						time.Sleep(time.Second) // past the transport's 50 ms
					}
					body.send(data[len(data)/2*boolInt(stall):])
				}()
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Body != http.NoBody {
					t.Errorf("body %T; want http.NoBody", resp.Body)
				}
				<-body.closed
				n := <-got
				if stall {
					if n == int64(len(data)) {
						t.Errorf("the upstream read all %d bytes of the stalled body; want less", n)
					}
					if isClosed(body.eof) {
						t.Error("the stalled body was read to its end")
					}
					return
				}
				if !isClosed(body.eof) || n != int64(len(data)) {
					t.Errorf("the upstream read %d bytes (EOF seen %v); want all %d", n, isClosed(body.eof), len(data))
				}
			})
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
