package goawaytest_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teebody/teebody/pkg/goawaytest"
)

// servers are the two ways a Server starts, for tests that run on both.
var servers = []struct {
	name  string
	start func(http.Handler, ...goawaytest.Option) *goawaytest.Server
}{
	{"h2c", goawaytest.NewServer},
	{"tls", goawaytest.NewTLSServer},
}

// echo answers with the request's body.
func echo(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(w, r.Body) }

// firstAttempts returns a function for Refuse that picks the first
// request with each method and request URI, and none sent again.
func firstAttempts() func(*http.Request) bool {
	var seen sync.Map
	return func(r *http.Request) bool {
		_, again := seen.LoadOrStore(r.Method+" "+r.RequestURI, true)
		return !again
	}
}

// send sends a request with body to s with s's client, within ten
// seconds. Its body can be sent again (GetBody) only if replayable. It
// returns the response's status and body, or the error.
func send(t *testing.T, s *goawaytest.Server, method, path, body string, replayable bool) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
		if !replayable {
			rd = io.MultiReader(rd) // not a type NewRequest knows: no GetBody
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if (req.GetBody != nil) != (replayable && body != "") {
		t.Fatalf("GetBody set: %v, want %v", req.GetBody != nil, replayable)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.Status + " " + string(b), err
}

// wantStats fails the test unless s's counts are want.
func wantStats(t *testing.T, s *goawaytest.Server, want goawaytest.Stats) {
	t.Helper()
	if got := s.Stats(); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
}
