package teebody_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/teebody/teebody/pkg/teebody"
)

// A body read once, then replayed from its first byte.
func Example() {
	tee := teebody.New(io.NopCloser(strings.NewReader("kind: ConfigMap")))
	defer tee.Close() // the request is over: source closed, memory back

	first, _ := tee.NewReader()
	b, _ := io.ReadAll(first)
	fmt.Printf("sent:     %s\n", b)

	replay, _ := tee.NewReader() // what GetBody returns after a GOAWAY
	b, _ = io.ReadAll(replay)
	fmt.Printf("replayed: %s\n", b)
	// Output:
	// sent:     kind: ConfigMap
	// replayed: kind: ConfigMap
}

// The owner of an outgoing request hands the first follower out as its Body
// and lets the transport ask for more through GetBody; once the response is
// in, Seal; once the response body is closed, Close.
func ExampleTee_NewReader() {
	src := io.NopCloser(strings.NewReader(`{"data":{"k":"v"}}`))
	tee := teebody.New(src, teebody.WithLimit(1<<20))

	req, _ := http.NewRequest(http.MethodPost, "https://127.0.0.1/api/v1/namespaces/default/configmaps", nil)
	req.Body, _ = tee.NewReader()
	req.GetBody = tee.NewReader

	// The transport sends the body, is refused with a GOAWAY, and replays.
	io.Copy(io.Discard, req.Body)
	again, err := req.GetBody()
	if err != nil {
		fmt.Println("cannot replay:", err)
		return
	}
	b, _ := io.ReadAll(again)
	fmt.Printf("replay: %s\n", b)

	tee.Seal() // the response arrived: no more replays
	_, err = req.GetBody()
	fmt.Println(errors.Is(err, teebody.ErrNotReplayable), err)
	tee.Close()
	// Output:
	// replay: {"data":{"k":"v"}}
	// true teebody: body is not replayable: already streamed past its start
}

// A shared budget bounds what all bodies keep. A body it cannot hold still
// streams through whole; only its replay is refused, with the reason.
func ExampleNewBudget() {
	budget := teebody.NewBudget(4 << 10) // 4 KiB for all bodies together
	big := strings.Repeat("x", 64<<10)
	tee := teebody.New(io.NopCloser(strings.NewReader(big)), teebody.WithBudget(budget))

	first, _ := tee.NewReader()
	n, _ := io.Copy(io.Discard, first)
	fmt.Println("streamed", n, "bytes")

	_, err := tee.NewReader()
	var nre teebody.NotReplayableError
	if errors.As(err, &nre) {
		fmt.Println("replay refused:", nre.Reason())
	}
	tee.Close() // the budget is back at once
	fmt.Println("bytes held:", budget.InUse())
	// Output:
	// streamed 65536 bytes
	// replay refused: no_budget
	// bytes held: 0
}

// Close ends the request, whatever followers are still open: their Reads
// fail, no replay is handed out, and the memory goes back to the budget at
// once, but for the chunk a source Read in progress fills. The function
// given with WithOnDone runs once the source is closed and the filler gone.
func ExampleTee_Close() {
	budget := teebody.NewBudget(1 << 20)
	done := make(chan struct{})
	tee := teebody.New(io.NopCloser(strings.NewReader("kind: ConfigMap")),
		teebody.WithBudget(budget), teebody.WithOnDone(func() { close(done) }))
	first, _ := tee.NewReader()
	b := make([]byte, 4)
	n, _ := io.ReadFull(first, b)
	fmt.Printf("read %q, held: %d bytes\n", b[:n], budget.InUse())

	tee.Close() // first is left open, as a transport may abandon it
	_, err := first.Read(b)
	fmt.Println("read after Close:", err)
	_, err = tee.NewReader()
	fmt.Println("replay after Close:", err)
	<-done
	fmt.Println("held when done:", budget.InUse())
	// Output:
	// read "kind", held: 4096 bytes
	// read after Close: teebody: read on closed body
	// replay after Close: teebody: body is not replayable: the request is over
	// held when done: 0
}

// An owner of many Tees learns of the end of each without a goroutine
// waiting on it: here a WaitGroup counts the bodies whose source or filler
// goroutine may still be busy.
func ExampleWithOnDone() {
	var live sync.WaitGroup
	for _, body := range []string{"kind: ConfigMap", "kind: Secret"} {
		live.Add(1)
		tee := teebody.New(io.NopCloser(strings.NewReader(body)), teebody.WithOnDone(live.Done))
		first, _ := tee.NewReader()
		b, _ := io.ReadAll(first)
		fmt.Printf("sent: %s\n", b)
		tee.Close() // the request is over
	}
	live.Wait() // every source closed, every filler gone
	fmt.Println("all done")
	// Output:
	// sent: kind: ConfigMap
	// sent: kind: Secret
	// all done
}
