package goawaytest_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync/atomic"

	"github.com/teebody/teebody/pkg/goawaytest"
)

// An upstream that ends each connection after two requests, as nginx with
// keepalive_requests 2: six requests sent one at a time use three
// connections, and a GET, which has no body to send again, is never lost.
func ExampleEndAfter() {
	upstream := goawaytest.NewTLSServer(http.HandlerFunc(drain), goawaytest.EndAfter(2))
	defer upstream.Close()
	for range 6 {
		resp, err := upstream.Client().Get(upstream.URL)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
	}
	fmt.Printf("%+v\n", upstream.Stats())
	// Output: {Requests:6 Refusals:0 Goaways:3}
}

// An upstream that ends a request's connection with a probability, as
// kube-apiserver with --goaway-chance: with a seeded generator, the same
// requests end the same connections in every run.
func ExampleEndChance() {
	upstream := goawaytest.NewServer(http.HandlerFunc(drain), goawaytest.EndChance(0.5, rand.New(rand.NewPCG(1, 1))))
	defer upstream.Close()
	for range 10 {
		resp, err := upstream.Client().Get(upstream.URL)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
	}
	fmt.Printf("%+v\n", upstream.Stats())
	// Output: {Requests:10 Refusals:0 Goaways:3}
}

// An upstream that refuses a 1 MiB upload once more than 256 KiB of it has
// arrived: the client sends it again from its GetBody, and the handler
// runs it once, with the whole body.
func ExampleRefuseAfter() {
	var refused atomic.Bool // refuse the first request only
	upstream := goawaytest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, n)
	}), goawaytest.RefuseAfter(256<<10, func(*http.Request) bool { return refused.CompareAndSwap(false, true) }))
	defer upstream.Close()
	resp, err := upstream.Client().Post(upstream.URL, "application/octet-stream", bytes.NewReader(make([]byte, 1<<20)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	fmt.Printf("%s %s bytes %+v\n", resp.Status, got, upstream.Stats())
	// Output: 200 OK 1048576 bytes {Requests:1 Refusals:1 Goaways:1}
}

// Ran tells how many times the handler ran a request, so that a test can
// check that a request refused and sent again ran once.
func ExampleServer_Ran() {
	var refused atomic.Bool // refuse the first request only
	upstream := goawaytest.NewServer(http.HandlerFunc(drain), goawaytest.Refuse(func(*http.Request) bool { return refused.CompareAndSwap(false, true) }))
	defer upstream.Close()
	req, _ := http.NewRequest("PUT", upstream.URL+"/items/1", http.NoBody)
	resp, err := upstream.Client().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.Status, upstream.Ran(req), upstream.Stats().Refusals)
	// Output: 200 OK 1 1
}
