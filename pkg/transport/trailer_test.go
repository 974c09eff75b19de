package transport_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// trailingBody is a request body that sets its request's trailer in the Read
// that returns io.EOF, as net/http lets a body do, and as the inbound bodies
// of net/http's servers do. That Read waits for release.
type trailingBody struct {
	r       *bytes.Reader
	trailer http.Header
	value   string
	release <-chan struct{}
}

func (b *trailingBody) Read(p []byte) (int, error) {
	if b.r.Len() > 0 {
		return b.r.Read(p)
	}
	<-b.release
	b.trailer.Set("X-Body-Sha256", b.value)
	return 0, io.EOF
}

func (b *trailingBody) Close() error { return nil }

// TestTrailerReplayed sends a body whose trailer is set at its end through a
// replay: the upstream's first connection refuses it with a graceful GOAWAY,
// and the body ends only once the replay has reached the upstream. The
// upstream must get the trailer's final value, and the caller's map must
// hold only what the body put there.
func TestTrailerReplayed(t *testing.T) {
	data := bytes.Repeat([]byte("trailer "), 8<<10)
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])

	release := make(chan struct{})
	var once sync.Once
	upstream := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(release) })
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, r.Trailer.Get("X-Body-Sha256"))
		_ = n
	}), proxytest.Options{RefuseEvery: math.MaxInt64})
	tr := transport.New(transportTo(t, upstream), transport.DefaultConfig())

	body := &trailingBody{r: bytes.NewReader(data), value: want, release: release}
	req, err := http.NewRequest(http.MethodPost, upstream.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	req.Trailer = http.Header{"X-Body-Sha256": nil}
	body.trailer = req.Trailer
	var report transport.Report
	req = req.WithContext(transport.WithReport(req.Context(), &report))

	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || string(got) != want {
		t.Fatalf("upstream answered %s %q; want 200 and the trailer %q", resp.Status, got, want)
	}
	if upstream.Goaways() != 1 || report.Attempts != 2 {
		t.Fatalf("%d GOAWAYs, %d attempts; want 1 and 2: the request was not replayed", upstream.Goaways(), report.Attempts)
	}
	if len(req.Trailer) != 1 || req.Trailer.Get("X-Body-Sha256") != want {
		t.Fatalf("the caller's trailer is %v; want the body's own update and nothing else", req.Trailer)
	}
}

// TestTrailerNotSharedWithFiller has an inner RoundTripper read the request's
// Trailer map while the body's source ends, as an HTTP/2 transport may when
// it sends a replay's headers. The source sets its trailer in the filler's
// goroutine; the race detector fails this test if the inner RoundTripper
// reads that same map. Once the body it reads ends, it must see the final
// value.
func TestTrailerNotSharedWithFiller(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 4<<10)
	release := make(chan struct{})
	inner := roundTripFunc(func(out *http.Request) (*http.Response, error) {
		if _, err := io.ReadFull(out.Body, make([]byte, 1)); err != nil { // the filler is running
			return nil, err
		}
		close(release) // the source may end now, in the filler
		if vs, ok := out.Trailer["X-Body-Sha256"]; !ok || len(vs) != 0 {
			t.Errorf("before the body's end the inner RoundTripper's Trailer is %v; want the key with no value", out.Trailer)
		}
		if _, err := io.Copy(io.Discard, out.Body); err != nil {
			return nil, err
		}
		got := out.Trailer.Get("X-Body-Sha256")
		return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(got)), Request: out}, nil
	})
	if got := sendTrailing(t, inner, data, release); got != "final" {
		t.Fatalf("after the body's end the inner RoundTripper saw the trailer %q; want %q", got, "final")
	}
}

// replaceBody reads a byte of out's body, so that the filler is running,
// then takes a newer body from GetBody and closes release, so that the
// source may end. It returns the older body and the newer.
func replaceBody(out *http.Request, release chan struct{}) (stale, next io.ReadCloser, err error) {
	if _, err := io.ReadFull(out.Body, make([]byte, 1)); err != nil {
		return nil, nil, err
	}
	next, err = out.GetBody()
	if err != nil {
		return nil, nil, err
	}
	close(release)
	return out.Body, next, nil
}

// TestTrailerStaleFollower has an inner RoundTripper replace its body with a
// newer one from GetBody, and go on reading the older one to its end in a
// goroutine that outlived its attempt (as quic-go's body writer does) while
// the newer attempt's headers read the Trailer map. Only the newest
// follower may publish the trailer: the race detector fails this test if
// the older one writes the map, and so does the check that the map still
// holds no value once the older one has ended. The older one ends before
// the newest has published, so it must fail rather than return io.EOF: a
// write that reads the map after its body's end could meet the publish
// (TestTrailerStaleWriterMeetsPublish).
func TestTrailerStaleFollower(t *testing.T) {
	release := make(chan struct{})
	inner := roundTripFunc(func(out *http.Request) (*http.Response, error) {
		stale, next, err := replaceBody(out, release)
		if err != nil {
			return nil, err
		}
		staleDone := make(chan error)
		go func() {
			_, err := io.Copy(io.Discard, stale)
			staleDone <- err
		}()
		for k, vs := range out.Trailer { // the newer attempt's headers
			_, _ = k, len(vs)
		}
		if err := <-staleDone; err == nil {
			t.Errorf("the follower that GetBody replaced ended with io.EOF before the newest published the trailer; want an error")
		}
		if vs := out.Trailer["X-Body-Sha256"]; len(vs) != 0 {
			t.Errorf("the follower that GetBody replaced published the trailer %q", vs)
		}
		if _, err := io.Copy(io.Discard, next); err != nil {
			return nil, err
		}
		got := out.Trailer.Get("X-Body-Sha256")
		return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(got)), Request: out}, nil
	})
	if got := sendTrailing(t, inner, bytes.Repeat([]byte("s"), 4<<10), release); got != "final" {
		t.Fatalf("after the newest body's end the inner RoundTripper saw the trailer %q; want %q", got, "final")
	}
}

// sendTrailing sends data through a Transport over inner, as the body of a
// POST whose trailer X-Body-Sha256 the body sets to "final" at its end,
// once release is closed. It returns the response's body: what inner
// answers.
func sendTrailing(t *testing.T, inner http.RoundTripper, data []byte, release <-chan struct{}) string {
	t.Helper()
	body := &trailingBody{r: bytes.NewReader(data), value: "final", release: release}
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/", body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	req.Trailer = http.Header{"X-Body-Sha256": nil}
	body.trailer = req.Trailer
	resp, err := transport.New(inner, transport.DefaultConfig()).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// TestTrailerStaleWriterMeetsPublish has a write that outlived its attempt
// (as quic-go's body writer does) read the request's Trailer map after its
// body's end, to send the values, while another goroutine reads the newest
// body, from GetBody, to its end. A start barrier lets the two go at once:
// in StaleEndsFirst the older body has already ended, in BothAtOnce it ends
// after the barrier too. The race detector fails this test if the newest
// body's end writes the map while the older write reads it. A write whose
// body ends with io.EOF must send the trailer's final value, and so must
// the newest.
func TestTrailerStaleWriterMeetsPublish(t *testing.T) {
	for _, tc := range []struct {
		name       string
		staleFirst bool // the older body reaches its end before the barrier
	}{
		{"StaleEndsFirst", true},
		{"BothAtOnce", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			inner := roundTripFunc(func(out *http.Request) (*http.Response, error) {
				stale, next, err := replaceBody(out, release)
				if err != nil {
					return nil, err
				}
				var staleErr error
				if tc.staleFirst {
					_, staleErr = io.Copy(io.Discard, stale)
				}

				type written struct {
					trailer string // the value sent after the body
					err     error  // the body's error; no trailer is sent then
				}
				start := make(chan struct{})
				staleDone := make(chan written, 1)
				go func() { // the write that outlived its attempt
					<-start
					err := staleErr
					if !tc.staleFirst {
						_, err = io.Copy(io.Discard, stale)
					}
					if err != nil {
						staleDone <- written{err: err}
						return
					}
					staleDone <- written{trailer: sentTrailer(out.Trailer, "X-Body-Sha256")}
				}()
				newestDone := make(chan written, 1)
				go func() { // the newest attempt's write
					<-start
					if _, err := io.Copy(io.Discard, next); err != nil {
						newestDone <- written{err: err}
						return
					}
					newestDone <- written{trailer: sentTrailer(out.Trailer, "X-Body-Sha256")}
				}()
				close(start)

				older, newest := <-staleDone, <-newestDone
				if older.err == nil && older.trailer != "final" {
					t.Errorf("the write that outlived its attempt ended its body and sent the trailer %q; want %q, or a failed body", older.trailer, "final")
				}
				if newest.err != nil {
					return nil, newest.err
				}
				return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(newest.trailer)), Request: out}, nil
			})
			if got := sendTrailing(t, inner, bytes.Repeat([]byte("m"), 4<<10), release); got != "final" {
				t.Fatalf("after the newest body's end the inner RoundTripper saw the trailer %q; want %q", got, "final")
			}
		})
	}
}

// sentTrailer reads trailer as a transport does after its body's end, to
// send the values (http.Header.Write, quic-go's writeTrailers), and returns
// key's first value.
func sentTrailer(trailer http.Header, key string) string {
	var got string
	for k, vs := range trailer {
		for _, v := range vs {
			if k == key && got == "" {
				got = v
			}
		}
	}
	return got
}
