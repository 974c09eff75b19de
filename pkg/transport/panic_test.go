package transport_test

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/teebody/teebody/pkg/transport"
)

// panicking is a middleware that reads the first half of a request's body
// and panics.
type panicking struct{ value any }

func (p panicking) RoundTrip(req *http.Request) (*http.Response, error) {
	io.CopyN(io.Discard, req.Body, req.ContentLength/2)
	panic(p.value)
}

// TestPanicReleases: a panic in the inner RoundTripper ends the request as
// an error would, and goes on with its value: the Tee's bytes are back in
// the budget and Drain returns.
func TestPanicReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		value := &struct{ msg string }{"middleware bug"}
		tr := transport.New(panicking{value}, transport.DefaultConfig())
		payload := bytes.Repeat([]byte("p"), 4<<20)
		func() {
			defer func() {
				if got := recover(); got != any(value) {
					t.Errorf("recovered %v, want the inner RoundTripper's panic value", got)
				}
			}()
			tr.RoundTrip(post(t.Context(), payload))
		}()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if err := tr.Drain(ctx); err != nil {
			t.Errorf("Drain: %v, want nil", err)
		}
		if st := tr.Stats(); st.BytesHeld != 0 {
			t.Errorf("BytesHeld %d after the panic, want 0", st.BytesHeld)
		}
	})
}

// TestPanicBehindServer: three requests of 4 MiB through
// httputil.ReverseProxy over the Transport, whose inner RoundTripper reads
// 2 MiB of each and panics. net/http's server recovers each panic. Then
// nothing is held, Drain returns and no goroutine is left (TestMain).
func TestPanicBehindServer(t *testing.T) {
	tr := transport.New(panicking{"middleware bug"}, transport.DefaultConfig())
	target, _ := url.Parse("http://upstream.test")
	front := httptest.NewUnstartedServer(&httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: tr,
	})
	front.Config.ErrorLog = log.New(io.Discard, "", 0) // "http: panic serving"
	front.Start()
	defer front.Close()
	client := front.Client()
	defer client.CloseIdleConnections()
	for range 3 {
		resp, err := client.Post(front.URL, "application/octet-stream", bytes.NewReader(bytes.Repeat([]byte("p"), 4<<20)))
		if err == nil {
			resp.Body.Close()
			t.Fatalf("POST: %s, want the connection closed by the server's recovery", resp.Status)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := tr.Drain(ctx); err != nil {
		t.Errorf("Drain: %v, want nil", err)
	}
	if st := tr.Stats(); st.BytesHeld != 0 {
		t.Errorf("BytesHeld %d after three panics, want 0", st.BytesHeld)
	}
}

// nilResponse is a broken RoundTripper: it reads half of the body and
// returns neither a response nor an error.
type nilResponse struct{}

func (nilResponse) RoundTrip(req *http.Request) (*http.Response, error) {
	io.CopyN(io.Discard, req.Body, req.ContentLength/2)
	return nil, nil
}

// answering answers every request 200 with a body, without reading the
// request's body, and counts the Closes of the bodies it gave.
type answering struct{ closed *atomic.Int64 }

func (a answering) RoundTrip(req *http.Request) (*http.Response, error) {
	body := &closeCounting{Reader: strings.NewReader("ok"), closes: a.closed}
	return &http.Response{StatusCode: http.StatusOK, Body: body, Request: req}, nil
}

type closeCounting struct {
	io.Reader
	closes *atomic.Int64
}

func (c *closeCounting) Close() error { c.closes.Add(1); return nil }

// TestBrokenInnerOrHookReleases: an inner RoundTripper that returns a nil
// response with a nil error gets an error, and a BodyTrace hook that
// panics on RoundTrip's goroutine once the response came goes on
// panicking; either way the request ends, its bytes are back in the
// budget, Drain returns, and a response that came is closed.
func TestBrokenInnerOrHookReleases(t *testing.T) {
	payload := bytes.Repeat([]byte("p"), 1<<20)
	hookPanic := &struct{ msg string }{"hook bug"}
	var closed atomic.Int64
	for _, tc := range []struct {
		name   string
		inner  http.RoundTripper
		trace  *transport.BodyTrace
		closes int64 // of the response's body
	}{
		{"nil response", nilResponse{}, nil, 0},
		{"SendStart panics", answering{&closed}, &transport.BodyTrace{SendStart: func(int) { panic(hookPanic) }}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := transport.New(tc.inner, transport.DefaultConfig())
				req := post(t.Context(), payload)
				if tc.trace != nil {
					req = req.WithContext(transport.WithBodyTrace(req.Context(), tc.trace))
				}
				func() {
					defer func() {
						if got := recover(); tc.trace != nil && got != any(hookPanic) {
							t.Errorf("recovered %v, want the hook's panic value", got)
						}
					}()
					resp, err := tr.RoundTrip(req)
					if err == nil || resp != nil {
						t.Errorf("RoundTrip = %v, %v; want no response and an error", resp, err)
					}
				}()
				if err := tr.Drain(t.Context()); err != nil {
					t.Errorf("Drain: %v, want nil", err)
				}
				if st := tr.Stats(); st.BytesHeld != 0 {
					t.Errorf("BytesHeld %d, want 0", st.BytesHeld)
				}
				if n := closed.Swap(0); n != tc.closes {
					t.Errorf("the response's body closed %d times, want %d", n, tc.closes)
				}
			})
		})
	}
}
