package goawaytest_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/teebody/teebody/pkg/goawaytest"
	"github.com/teebody/teebody/pkg/transport"
)

// drain is an upstream's handler: it reads the body and answers 200 OK.
func drain(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }

// A reverse proxy with a plain transport cannot send a body again after a
// GOAWAY: the upstream refuses the first request once its body has started,
// and the proxy answers 502. The upstream's handler never ran it.
func Example() {
	var refused atomic.Bool // refuse the first request only
	upstream := goawaytest.NewTLSServer(http.HandlerFunc(drain), goawaytest.Refuse(func(*http.Request) bool { return refused.CompareAndSwap(false, true) }))
	defer upstream.Close()
	target, _ := url.Parse(upstream.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = upstream.Client().Transport // an http.Transport that speaks HTTP/2
	proxy.ErrorLog = log.New(io.Discard, "", 0)   // quiet: "http: proxy error: http2: Transport: cannot retry err [...]"
	front := httptest.NewServer(proxy)
	defer front.Close()
	resp, _ := http.Post(front.URL, "text/plain", strings.NewReader("hello"))
	resp.Body.Close()
	fmt.Printf("%s %+v\n", resp.Status, upstream.Stats())
	// Output: 502 Bad Gateway {Requests:0 Refusals:1 Goaways:1}
}

// The same proxy with pkg/transport keeps what it sends of each body, so it
// sends the refused request again on a new connection: the proxy answers 200,
// and the upstream ran the request once.
func Example_fixed() {
	var refused atomic.Bool // refuse the first request only
	upstream := goawaytest.NewTLSServer(http.HandlerFunc(drain), goawaytest.Refuse(func(*http.Request) bool { return refused.CompareAndSwap(false, true) }))
	defer upstream.Close()
	target, _ := url.Parse(upstream.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = transport.New(upstream.Client().Transport, transport.Config{})
	front := httptest.NewServer(proxy)
	defer front.Close()
	resp, _ := http.Post(front.URL, "text/plain", strings.NewReader("hello"))
	resp.Body.Close()
	fmt.Printf("%s %+v\n", resp.Status, upstream.Stats())
	// Output: 200 OK {Requests:1 Refusals:1 Goaways:1}
}
