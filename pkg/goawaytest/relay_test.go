package goawaytest_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/teebody/teebody/pkg/goawaytest"
	"golang.org/x/net/http2"
)

// wantFrames fails the test unless the frames described are want.
func wantFrames(t *testing.T, step string, got []http2.Frame, want ...string) {
	t.Helper()
	if d := describe(got); !slices.Equal(d, want) {
		t.Errorf("%s: got %q, want %q", step, d, want)
	}
}

// wantSeen fails the test unless the frames seen are want.
func wantSeen(t *testing.T, step string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %q, want %q", step, got, want)
	}
}

// A picked stream waits for its body; then a GOAWAY whose last stream ID is
// below it refuses it and every stream opened after it. None of them
// reaches the handler, and the DATA frames kept from the server give their
// connection's flow control back to the client.
func TestRefusalKeepsStreamsFromServer(t *testing.T) {
	s := goawaytest.NewServer(http.HandlerFunc(echo), goawaytest.Refuse(func(r *http.Request) bool { return r.URL.Path == "/refuse" }))
	defer s.Close()
	rc := dialRaw(t, s)
	rc.headers(1, "GET", "/a", true)
	wantSeen(t, "served", rc.until("HEADERS 1"), "HEADERS 1")
	rc.headers(3, "POST", "/refuse", false)
	rc.headers(5, "POST", "/b", false)
	rc.check(rc.fr.WriteData(5, false, make([]byte, 1000)))
	wantFrames(t, "before the body", rc.sync(), "WINDOW_UPDATE 1000")
	rc.check(rc.fr.WriteData(3, false, []byte("x")))
	wantFrames(t, "the body", rc.sync(), "GOAWAY 1 NO_ERROR", "WINDOW_UPDATE 1")
	rc.headers(7, "GET", "/c", true)
	wantFrames(t, "after", rc.sync())
	wantStats(t, s, goawaytest.Stats{Requests: 1, Refusals: 3, Goaways: 1})
}

// A picked stream that the client resets before its body still sends the
// GOAWAY, for the streams opened after it.
func TestRefusalOfResetStream(t *testing.T) {
	s := goawaytest.NewServer(http.HandlerFunc(echo), goawaytest.Refuse(func(r *http.Request) bool { return r.URL.Path == "/refuse" }))
	defer s.Close()
	rc := dialRaw(t, s)
	rc.headers(1, "POST", "/refuse", false)
	rc.headers(3, "POST", "/b", false)
	rc.check(rc.fr.WriteRSTStream(1, http2.ErrCodeCancel))
	wantFrames(t, "reset", rc.sync(), "GOAWAY 0 NO_ERROR")
	wantStats(t, s, goawaytest.Stats{Requests: 0, Refusals: 1, Goaways: 1})
}

// A picked stream's trailers, without DATA, are the start of its body.
func TestRefusalOnTrailers(t *testing.T) {
	s := goawaytest.NewServer(http.HandlerFunc(echo), goawaytest.Refuse(func(r *http.Request) bool { return r.URL.Path == "/refuse" }))
	defer s.Close()
	rc := dialRaw(t, s)
	rc.headers(1, "POST", "/refuse", false)
	wantFrames(t, "headers", rc.sync())
	rc.buf.Reset()
	rc.check(rc.enc.WriteField(hpackField("x-trailer", "t")))
	rc.check(rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: rc.buf.Bytes(), EndStream: true, EndHeaders: true}))
	wantFrames(t, "trailers", rc.sync(), "GOAWAY 0 NO_ERROR")
	wantStats(t, s, goawaytest.Stats{Requests: 0, Refusals: 1, Goaways: 1})
}

// EndAfter's GOAWAY names the n-th stream and reaches the client before its
// response; the streams opened after it are refused.
func TestEndAfterFrames(t *testing.T) {
	s := goawaytest.NewServer(http.HandlerFunc(echo), goawaytest.EndAfter(2))
	defer s.Close()
	rc := dialRaw(t, s)
	rc.headers(1, "GET", "/a", true)
	wantSeen(t, "first", rc.until("HEADERS 1"), "HEADERS 1")
	rc.headers(3, "GET", "/b", true)
	wantSeen(t, "second", rc.until("HEADERS 3"), "GOAWAY 3 NO_ERROR", "HEADERS 3")
	rc.headers(5, "GET", "/c", true)
	wantFrames(t, "third", rc.sync())
	wantStats(t, s, goawaytest.Stats{Requests: 2, Refusals: 1, Goaways: 1})
}

// The server's own GOAWAY, for a handler's "Connection: close", is counted
// with the streams it refuses. The handler returns only at the end: once a
// graceful GOAWAY's streams are done, Go's server closes the connection
// within a second.
func TestServerGoawayCounted(t *testing.T) {
	release := make(chan struct{})
	s := goawaytest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.(http.Flusher).Flush()
		<-release
	}))
	defer s.Close()
	defer close(release)
	rc := dialRaw(t, s)
	rc.headers(1, "GET", "/a", true)
	got := rc.until("GOAWAY 1 NO_ERROR", "HEADERS 1")
	slices.Sort(got)
	wantSeen(t, "first", got, "GOAWAY 1 NO_ERROR", "HEADERS 1")
	rc.headers(3, "GET", "/b", true)
	wantFrames(t, "after", rc.sync())
	wantStats(t, s, goawaytest.Stats{Requests: 1, Refusals: 1, Goaways: 1})
}

// windows returns the increments of the WINDOW_UPDATE frames among fs by
// stream, 0 for the connection's, leaving out the server's opening one,
// and whether fs hold a GOAWAY.
func windows(fs []http2.Frame) (map[uint32]uint32, bool) {
	inc, goaway := map[uint32]uint32{}, false
	for _, f := range fs {
		switch f := f.(type) {
		case *http2.WindowUpdateFrame:
			if f.StreamID != 0 || f.Increment < 1<<16 {
				inc[f.StreamID] += f.Increment
			}
		case *http2.GoAwayFrame:
			goaway = true
		}
	}
	return inc, goaway
}

// RefuseAfter's GOAWAY waits until more than n bytes of the picked
// stream's body arrived; until then, the relay gives back both the
// connection's and the stream's flow-control window for each DATA frame.
func TestRefuseAfterWaitsForBody(t *testing.T) {
	const after = 100_000
	s := goawaytest.NewServer(http.HandlerFunc(echo), goawaytest.RefuseAfter(after, func(r *http.Request) bool { return r.URL.Path == "/refuse" }))
	defer s.Close()
	rc := dialRaw(t, s)
	rc.headers(1, "POST", "/refuse", false)
	for sent := 0; sent < after; {
		n := min(after-sent, 16384)
		rc.check(rc.fr.WriteData(1, false, make([]byte, n)))
		sent += n
	}
	inc, goaway := windows(rc.sync())
	if goaway || inc[0] != after || inc[1] != after || len(inc) != 2 {
		t.Errorf("after %d bytes: GOAWAY %v, window updates %v; want none, and %d for the connection and stream 1", after, goaway, inc, after)
	}
	rc.check(rc.fr.WriteData(1, false, []byte("x")))
	wantFrames(t, "one byte more", rc.sync(), "GOAWAY 0 NO_ERROR", "WINDOW_UPDATE 1")
	wantStats(t, s, goawaytest.Stats{Requests: 0, Refusals: 1, Goaways: 1})
}
