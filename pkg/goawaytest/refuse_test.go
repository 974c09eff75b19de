package goawaytest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teebody/teebody/pkg/goawaytest"
)

// cannotRetry is Go's error for a request refused after its body was
// written, when the request has no GetBody.
const cannotRetry = "http2: Transport: cannot retry err [http2: Transport received Server's graceful shutdown GOAWAY] after Request.Body was written; define Request.GetBody to avoid this error"

// Every refused request fails without GetBody and succeeds with it, 100 of
// 100 times, and the handler runs each successful request once and no
// refused one.
func TestRefuseEveryTime(t *testing.T) {
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) {
			s := sv.start(http.HandlerFunc(echo), goawaytest.Refuse(firstAttempts()))
			defer s.Close()
			const runs = 100
			for i := range runs {
				failPath, okPath := fmt.Sprintf("/fail/%d", i), fmt.Sprintf("/ok/%d", i)
				if got, err := send(t, s, "POST", failPath, "hello", false); err == nil || !strings.Contains(err.Error(), cannotRetry) {
					t.Fatalf("run %d: without GetBody: %q, %v; want %q", i, got, err, cannotRetry)
				}
				if got, err := send(t, s, "POST", okPath, "hello", true); err != nil || got != "200 OK hello" {
					t.Fatalf("run %d: with GetBody: %q, %v; want 200 OK hello", i, got, err)
				}
				fail, _ := http.NewRequest("POST", failPath, nil)
				ok, _ := http.NewRequest("POST", okPath, nil)
				if s.Ran(fail) != 0 || s.Ran(ok) != 1 {
					t.Fatalf("run %d: the handler ran the failed request %d times and the other %d; want 0 and 1", i, s.Ran(fail), s.Ran(ok))
				}
			}
			wantStats(t, s, goawaytest.Stats{Requests: runs, Refusals: 2 * runs, Goaways: 2 * runs})
		})
	}
}

// A refused request without a body is sent again, with or without
// GetBody.
func TestRefuseWithoutBody(t *testing.T) {
	s := goawaytest.NewServer(http.HandlerFunc(echo), goawaytest.Refuse(firstAttempts()))
	defer s.Close()
	if got, err := send(t, s, "GET", "/", "", false); err != nil || got != "200 OK " {
		t.Fatalf("got %q, %v; want 200 OK", got, err)
	}
	wantStats(t, s, goawaytest.Stats{Requests: 1, Refusals: 1, Goaways: 1})
}

// Refuse's function sees the request's method, URL, Host, header, length,
// remote address and TLS state, and an empty body.
func TestRefuseSeesRequest(t *testing.T) {
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			s := sv.start(http.HandlerFunc(echo), goawaytest.Refuse(func(r *http.Request) bool {
				b, err := io.ReadAll(r.Body)
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, fmt.Sprintf("%s %s %s %s %q %d %v %v %q %v %v", r.Method, r.URL.Scheme, r.URL.Path, r.URL.RawQuery,
					r.Header.Get("X-Test"), r.ContentLength, r.RemoteAddr != "", r.TLS != nil, b, err, r.Host == r.URL.Host && r.Host != ""))
				return false
			}))
			defer s.Close()
			ctx := t.Context()
			req, _ := http.NewRequestWithContext(ctx, "PUT", s.URL+"/p?q=1", strings.NewReader("hello"))
			req.Header.Set("X-Test", "v")
			resp, err := s.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			scheme := map[string]string{"h2c": "http", "tls": "https"}[sv.name]
			want := fmt.Sprintf(`PUT %s /p q=1 "v" 5 true %v "" <nil> true`, scheme, sv.name == "tls")
			if len(seen) != 1 || seen[0] != want {
				t.Errorf("saw %q, want [%q]", seen, want)
			}
		})
	}
}

// Requests sent at once on one connection, with large bodies, all succeed
// with GetBody when one of them is refused (with those the client opened
// after it), and each runs once. The streams kept from the server give
// their connection's flow control back, or the others would stall.
func TestRefuseConcurrent(t *testing.T) {
	first := firstAttempts()
	s := goawaytest.NewTLSServer(http.HandlerFunc(echo), goawaytest.Refuse(func(r *http.Request) bool {
		return r.URL.Path == "/7" && first(r)
	}))
	defer s.Close()
	body := strings.Repeat("x", 256<<10)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			got, err := send(t, s, "POST", fmt.Sprintf("/%d", i), body, true)
			if err == nil && got != "200 OK "+body {
				err = fmt.Errorf("/%d: %.20q...", i, got)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range n {
		if r, _ := http.NewRequest("POST", fmt.Sprintf("/%d", i), nil); s.Ran(r) != 1 {
			t.Errorf("/%d ran %d times, want 1", i, s.Ran(r))
		}
	}
	if st := s.Stats(); st.Requests != n || st.Refusals < 1 || st.Goaways < 1 {
		t.Errorf("Stats() = %+v, want %d requests and a refusal at least", st, n)
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// A request picked by RefuseAfter with a limit beyond the stream's initial
// flow-control window (Go's server announces 1 MiB) is refused once more
// than the limit has arrived, 100 of 100 times: it fails without GetBody,
// after the client read more than the limit of its body, and succeeds
// with it. The handler runs each successful request once and no refused
// one.
func TestRefuseAfterEveryTime(t *testing.T) {
	const after = 1 << 20
	body := strings.Repeat("x", after+1<<10)
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) {
			s := sv.start(http.HandlerFunc(echo), goawaytest.RefuseAfter(after, firstAttempts()))
			defer s.Close()
			const runs = 100
			for i := range runs {
				failPath, okPath := fmt.Sprintf("/fail/%d", i), fmt.Sprintf("/ok/%d", i)
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				cr := &countingReader{r: strings.NewReader(body)} // not a type NewRequest knows: no GetBody
				req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+failPath, cr)
				resp, err := s.Client().Do(req)
				cancel()
				if err == nil {
					resp.Body.Close()
				}
				if err == nil || !strings.Contains(err.Error(), cannotRetry) {
					t.Fatalf("run %d: without GetBody: %v; want %q", i, err, cannotRetry)
				}
				if n := cr.n.Load(); n <= after {
					t.Fatalf("run %d: refused after the client read %d bytes of the body, want more than %d", i, n, after)
				}
				if got, err := send(t, s, "POST", okPath, body, true); err != nil || got != "200 OK "+body {
					t.Fatalf("run %d: with GetBody: %.20q..., %v; want 200 OK and the body", i, got, err)
				}
				fail, _ := http.NewRequest("POST", failPath, nil)
				ok, _ := http.NewRequest("POST", okPath, nil)
				if s.Ran(fail) != 0 || s.Ran(ok) != 1 {
					t.Fatalf("run %d: the handler ran the failed request %d times and the other %d; want 0 and 1", i, s.Ran(fail), s.Ran(ok))
				}
			}
			wantStats(t, s, goawaytest.Stats{Requests: runs, Refusals: 2 * runs, Goaways: 2 * runs})
		})
	}
}

// A request picked by RefuseAfter whose whole body is within the limit is
// refused at its end.
func TestRefuseAfterWholeBody(t *testing.T) {
	s := goawaytest.NewServer(http.HandlerFunc(echo), goawaytest.RefuseAfter(1<<20, firstAttempts()))
	defer s.Close()
	if got, err := send(t, s, "POST", "/fail", "hello", false); err == nil || !strings.Contains(err.Error(), cannotRetry) {
		t.Fatalf("without GetBody: %q, %v; want %q", got, err, cannotRetry)
	}
	if got, err := send(t, s, "POST", "/ok", "hello", true); err != nil || got != "200 OK hello" {
		t.Fatalf("with GetBody: %q, %v; want 200 OK hello", got, err)
	}
	wantStats(t, s, goawaytest.Stats{Requests: 1, Refusals: 2, Goaways: 2})
}
