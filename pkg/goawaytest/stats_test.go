package goawaytest_test

import (
	"net/http"
	"testing"

	"github.com/teebody/teebody/pkg/goawaytest"
)

// Ran counts the handler's runs by method and request URI, for a client's
// request or a server's.
func TestRan(t *testing.T) {
	s := goawaytest.NewServer(http.HandlerFunc(echo))
	defer s.Close()
	for _, r := range []struct{ method, path string }{{"GET", "/a"}, {"GET", "/a"}, {"POST", "/a"}, {"GET", "/a?x=1"}} {
		if _, err := send(t, s, r.method, r.path, "", false); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		method, url string
		want        int64
	}{
		{"GET", s.URL + "/a", 2},
		{"", "/a", 2}, // GET
		{"POST", "/a", 1},
		{"GET", "/a?x=1", 1},
		{"GET", "/b", 0},
	} {
		r, err := http.NewRequest(c.method, c.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Method = c.method
		if got := s.Ran(r); got != c.want {
			t.Errorf("Ran(%s %s) = %d, want %d", c.method, c.url, got, c.want)
		}
	}
	server := &http.Request{Method: "POST", RequestURI: "/a"} // as a handler sees it, without URL
	if got := s.Ran(server); got != 1 {
		t.Errorf("Ran of a server's request = %d, want 1", got)
	}
	wantStats(t, s, goawaytest.Stats{Requests: 4})
}

// The zero Option changes nothing.
func TestZeroOption(t *testing.T) {
	s := goawaytest.NewServer(http.HandlerFunc(echo), goawaytest.Option{})
	defer s.Close()
	getN(t, s, 3)
	wantStats(t, s, goawaytest.Stats{Requests: 3})
}
