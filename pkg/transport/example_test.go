package transport_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// newCountingUpstream stands for the real upstream (a Kubernetes API
// server): it answers with the number of body bytes it received.
func newCountingUpstream() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(countBytes))
}

func countBytes(w http.ResponseWriter, r *http.Request) {
	n, _ := io.Copy(io.Discard, r.Body)
	fmt.Fprintf(w, "upstream got %d bytes", n)
}

// newRefusingUpstream is a counting upstream over HTTP/2 and TLS whose first
// connection, and no other, refuses its stream with a graceful GOAWAY, as a
// server that shuts down does. The client must send the request again on a
// new connection. Its Transport method returns a client transport to it.
func newRefusingUpstream() *proxytest.Server {
	return proxytest.NewServer(http.HandlerFunc(countBytes), proxytest.Options{RefuseEvery: math.MaxInt64})
}

func printResponse(resp *http.Response, err error) {
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, string(b))
}

// Behind httputil.ReverseProxy: set the Transport and its ErrorHandler, so
// that a request that cannot be replayed after a GOAWAY is answered 429
// with Retry-After instead of 502.
func ExampleNew() {
	upstream := newCountingUpstream()
	defer upstream.Close()
	target, _ := url.Parse(upstream.URL)

	tr := transport.New(nil, transport.DefaultConfig()) // nil: http.DefaultTransport
	defer tr.CloseIdleConnections()
	proxy := &httputil.ReverseProxy{
		Rewrite:      func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:    tr,
		ErrorHandler: tr.ErrorHandler,
	}
	front := httptest.NewServer(proxy)
	defer front.Close()

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	printResponse(client.Post(front.URL, "text/plain", strings.NewReader("hello, upstream")))
	fmt.Println("buffered by the proxy:", tr.Stats().Buffered)
	// Output:
	// 200 OK upstream got 15 bytes
	// buffered by the proxy: 1
}

// An upstream refuses the proxy's request with a graceful GOAWAY after part
// of the body was sent. The inbound body cannot be read twice, so the plain
// proxy would fail. The Transport replays it, and the upstream gets it whole.
func Example_replay() {
	upstream := newRefusingUpstream()
	defer upstream.Close()
	target, _ := url.Parse(upstream.URL)

	inner := upstream.Transport() // HTTP/2, trusting the upstream's certificate
	tr := transport.New(inner, transport.DefaultConfig())
	defer tr.CloseIdleConnections()
	front := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:      func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:    tr,
		ErrorHandler: tr.ErrorHandler,
	})
	defer front.Close()

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	body := strings.Repeat("x", 100<<10) // 100 KiB
	printResponse(client.Post(front.URL, "text/plain", strings.NewReader(body)))
	fmt.Println("GOAWAYs:", upstream.Goaways(), "replayed:", tr.Stats().ReplaysServed > 0)
	// Output:
	// 200 OK upstream got 102400 bytes
	// GOAWAYs: 1 replayed: true
}

// As an http.Client's transport: a body that http.NewRequest cannot rewind
// by itself (here a MultiReader; in a program, a stream) becomes
// replayable. Bodies that can (bytes.Reader, strings.Reader, bytes.Buffer)
// already have GetBody and pass through untouched.
func ExampleNew_client() {
	upstream := newCountingUpstream()
	defer upstream.Close()

	tr := transport.New(&http.Transport{ForceAttemptHTTP2: true}, transport.DefaultConfig())
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	stream := io.MultiReader(strings.NewReader("hello, "), strings.NewReader("world"))
	printResponse(client.Post(upstream.URL, "text/plain", stream))
	printResponse(client.Post(upstream.URL, "text/plain", strings.NewReader("rewindable")))

	st := tr.Stats()
	fmt.Println("buffered:", st.Buffered, "passed through with GetBody:", st.PassedThrough.GetBodySet)
	// Output:
	// 200 OK upstream got 12 bytes
	// 200 OK upstream got 10 bytes
	// buffered: 1 passed through with GetBody: 1
}

// A client-go program hands tr.Wrap to its rest.Config, then reads the
// Stats of every client made from it, and drains them all, through tr:
//
//	tr := transport.New(nil, cfg)
//	restConfig.Wrap(tr.Wrap)
//	clientset, err := kubernetes.NewForConfig(restConfig)
//	...
//	st := tr.Stats()
//
// Here two plain transports are wrapped the same way.
func ExampleTransport_Wrap() {
	upstream := newCountingUpstream()
	defer upstream.Close()

	cfg, err := transport.ConfigFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	tr := transport.New(nil, cfg)
	for range 2 {
		inner := &http.Transport{}
		defer inner.CloseIdleConnections()
		client := &http.Client{Transport: tr.Wrap(inner)}
		printResponse(client.Post(upstream.URL, "application/json", io.MultiReader(strings.NewReader(`{"kind":"ConfigMap"}`))))
	}
	if err := tr.Drain(context.Background()); err != nil {
		log.Fatal(err)
	}
	st := tr.Stats()
	fmt.Println("buffered:", st.Buffered, "bytes held:", st.BytesHeld)
	// Output:
	// 200 OK upstream got 20 bytes
	// 200 OK upstream got 20 bytes
	// buffered: 2 bytes held: 0
}

// ConfigFromEnv starts from DefaultConfig, the zero Config, and reads the
// variables that begin with EnvPrefix. New fills in the defaults and caps
// the limits.
func ExampleConfigFromEnv() {
	os.Setenv(transport.EnvPrefix+"TOTAL", "1GiB")
	os.Setenv(transport.EnvPrefix+"PER_REQ", "2Gi") // capped at the total
	os.Setenv(transport.EnvPrefix+"ADAPTIVE", "true")
	os.Setenv(transport.EnvPrefix+"ADAPTIVE_FLOOR", "0") // turns the floor off, not buffering
	cfg, err := transport.ConfigFromEnv()
	fmt.Println(cfg.TotalBytes, cfg.PerRequestBytes, cfg.Adaptive, cfg.AdaptiveFloorBytes, err)
	applied := transport.New(nil, cfg).Config() // what applies
	fmt.Println(applied.TotalBytes, applied.PerRequestBytes)

	os.Setenv(transport.EnvPrefix+"TOTAL", "0") // disables buffering
	cfg, err = transport.ConfigFromEnv()
	fmt.Println(cfg.Disabled, err)

	os.Setenv(transport.EnvPrefix+"TOTAL", "1OOMiB") // a typo keeps the default
	cfg, err = transport.ConfigFromEnv()
	fmt.Println(cfg.Disabled, cfg.TotalBytes, err != nil)

	for _, suffix := range []string{"TOTAL", "PER_REQ", "ADAPTIVE", "ADAPTIVE_FLOOR"} {
		os.Unsetenv(transport.EnvPrefix + suffix)
	}
	// Output:
	// 1073741824 2147483648 true -1 <nil>
	// 1073741824 1073741824
	// true <nil>
	// false 0 true
}

// A program other than Teleport names its own variables. One error reports
// every malformed one, each on a line of its own.
func ExampleConfigFromEnvPrefix() {
	os.Setenv("MYPROXY_BUFFER_TOTAL", "100MB")
	cfg, err := transport.ConfigFromEnvPrefix("MYPROXY_BUFFER_")
	applied := transport.New(nil, cfg).Config() // the defaults filled in
	fmt.Println(applied.TotalBytes, applied.PerRequestBytes, err)

	os.Setenv("MYPROXY_BUFFER_PER_REQ", "12XB")
	os.Setenv("MYPROXY_BUFFER_ADAPTIVE", "yes")
	_, err = transport.ConfigFromEnvPrefix("MYPROXY_BUFFER_")
	fmt.Println(err)

	os.Unsetenv("MYPROXY_BUFFER_TOTAL")
	os.Unsetenv("MYPROXY_BUFFER_PER_REQ")
	os.Unsetenv("MYPROXY_BUFFER_ADAPTIVE")
	// Output:
	// 100000000 52428800 <nil>
	// transport: MYPROXY_BUFFER_PER_REQ: invalid size "12XB": unknown unit "XB": want B, kB, KB, k, MB, M, GB, G, TB, T, KiB, Ki, MiB, Mi, GiB, Gi, TiB, Ti
	// transport: MYPROXY_BUFFER_ADAPTIVE: invalid boolean "yes": want true or false (1, t, T, TRUE, True, 0, f, F, FALSE, False)
}

func ExampleParseSize() {
	for _, s := range []string{"1048576", "512MiB", "50Mi", "5MB", "1G", "1.5GiB", "0", "1.5"} {
		n, err := transport.ParseSize(s)
		fmt.Println(s, n, err)
	}
	// Output:
	// 1048576 1048576 <nil>
	// 512MiB 536870912 <nil>
	// 50Mi 52428800 <nil>
	// 5MB 5000000 <nil>
	// 1G 1000000000 <nil>
	// 1.5GiB 1610612736 <nil>
	// 0 0 <nil>
	// 1.5 0 transport: invalid size "1.5": not a whole number of bytes
}

func ExampleShouldRetryLater() {
	for _, err := range []error{
		teebody.ErrNotReplayable,
		errors.New("net/http: cannot rewind body after connection loss"),
		errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"),
	} {
		fmt.Println(transport.ShouldRetryLater(err))
	}
	// Output:
	// true
	// true
	// false
}

// In adaptive mode, requests to an upstream that has not sent GOAWAY lately
// are kept only up to Config.AdaptiveFloorBytes (64 KiB): a small body is
// kept within that floor, so that the upstream's first GOAWAY costs it
// nothing, and a body that announces more passes through untouched and holds
// no memory. The first request the upstream refuses (answered 429 by
// ErrorHandler) or the first replay turns full buffering on for it, for
// Config.AdaptiveWindow after its latest such trace.
func Example_adaptive() {
	upstream := newCountingUpstream() // never sends GOAWAY
	defer upstream.Close()

	cfg := transport.DefaultConfig()
	cfg.Adaptive = true // or TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_ADAPTIVE=true with ConfigFromEnv
	tr := transport.New(&http.Transport{ForceAttemptHTTP2: true}, cfg)
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	small := io.MultiReader(strings.NewReader("hello")) // hides the length: kept up to the floor
	printResponse(client.Post(upstream.URL, "text/plain", small))
	large, err := http.NewRequest(http.MethodPost, upstream.URL, io.MultiReader(strings.NewReader(strings.Repeat("x", 1<<20))))
	if err != nil {
		log.Fatal(err)
	}
	large.ContentLength = 1 << 20 // announces more than the floor: passes through
	printResponse(client.Do(large))
	st := tr.Stats()
	fmt.Println("kept up to the floor:", st.BufferedQuiet, "passed through:", st.PassedThrough.Quiet, "peak bytes held:", st.PeakBytesHeld)
	// Output:
	// 200 OK upstream got 5 bytes
	// 200 OK upstream got 1048576 bytes
	// kept up to the floor: 1 passed through: 1 peak bytes held: 4096
}

// Responder is ErrorHandler in the shape of apimachinery's
// proxy.ErrorResponder, for UpgradeAwareHandler:
//
//	h := proxy.NewUpgradeAwareHandler(location, tr, wrapTransport, false, tr.Responder())
//
// A ReverseProxy in front of the Kubernetes API takes its Error method:
//
//	rp.ErrorHandler = tr.Responder().Error
//
// A body that could not be replayed is answered 429 with Retry-After, any
// other error 502 (its text goes to Config.ErrorLog, not to the client),
// both with a Kubernetes Status that client-go decodes.
func ExampleTransport_Responder() {
	cfg := transport.DefaultConfig()
	cfg.ErrorLog = log.New(io.Discard, "", 0) // where the 502s' errors go
	tr := transport.New(nil, cfg)
	responder := tr.Responder()
	req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/default/configmaps", nil)
	for _, err := range []error{
		teebody.ErrNotReplayable,
		errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"),
	} {
		rec := httptest.NewRecorder()
		responder.Error(rec, req, err)
		fmt.Println(rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
	}
	st := tr.Stats()
	fmt.Println("429s:", st.RetryLaterWritten, "502s:", st.BadGatewayWritten)
	// Output:
	// 429 1 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the request body could not be replayed after the upstream closed its connection; please try again in 1s","reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429}
	// 502  {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"proxy error; see the proxy's log","code":502}
	// 429s: 1 502s: 1
}
