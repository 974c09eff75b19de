package goawaytest_test

import (
	"fmt"
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
