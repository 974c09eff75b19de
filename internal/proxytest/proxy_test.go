package proxytest_test

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

// echo answers with what it received: method, URI, a header and the body.
func echo(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("X-Echo", r.Header.Get("X-Test"))
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, r.Method+" "+r.URL.RequestURI()+" "+string(b))
}

func TestHandProxyForwards(t *testing.T) {
	up := proxytest.NewServer(http.HandlerFunc(echo), proxytest.Options{})
	defer up.Close()
	inner := up.Transport()
	defer inner.CloseIdleConnections()
	target, err := url.Parse(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	front := proxytest.NewServer(&proxytest.HandProxy{Target: target, Transport: inner}, proxytest.Options{HTTP1: true})
	defer front.Close()
	client := front.Transport()
	defer client.CloseIdleConnections()

	for _, body := range []string{"the body", ""} {
		req, err := http.NewRequest(http.MethodPut, front.URL+"/a/b?c=d", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Test", "passed")
		resp, err := client.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := "PUT /a/b?c=d " + body
		if resp.StatusCode != http.StatusCreated || string(got) != want || resp.Header.Get("X-Echo") != "passed" {
			t.Errorf("got %s %q, X-Echo %q; want 201 %q, X-Echo passed", resp.Status, got, resp.Header.Get("X-Echo"), want)
		}
	}
}

type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

func TestHandProxyErrors(t *testing.T) {
	errUp := errors.New("upstream gone")
	var got error
	for _, tc := range []struct {
		name    string
		handler func(http.ResponseWriter, *http.Request, error)
		status  int
	}{
		{"default", nil, http.StatusBadGateway},
		{"handler", func(w http.ResponseWriter, _ *http.Request, err error) {
			got = err
			w.WriteHeader(http.StatusTooManyRequests)
		}, http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &proxytest.HandProxy{
				Target:       &url.URL{Scheme: "http", Host: "upstream.invalid"},
				Transport:    failingTransport{errUp},
				ErrorHandler: tc.handler,
			}
			front := proxytest.NewServer(p, proxytest.Options{HTTP1: true})
			defer front.Close()
			client := front.Transport()
			defer client.CloseIdleConnections()
			resp, err := client.RoundTrip(mustRequest(t, front.URL))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	if !errors.Is(got, errUp) {
		t.Errorf("ErrorHandler got %v, want the transport's error", got)
	}
}

func mustRequest(t *testing.T, target string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
