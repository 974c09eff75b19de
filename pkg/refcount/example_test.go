package refcount_test

import (
	"fmt"

	"github.com/teebody/teebody/pkg/refcount"
)

// A buffer shared by an owner and a reader goroutine is freed by whichever
// of them lets go last, exactly once.
func Example() {
	refs := refcount.New(func() { fmt.Println("buffer freed") })
	readerDone := make(chan struct{})
	if refs.Acquire() { // the reader's reference
		go func() {
			defer close(readerDone)
			defer refs.Release()
			fmt.Println("reader done")
		}()
	}
	refs.Release() // the owner's reference
	<-readerDone
	fmt.Println("acquire after release:", refs.Acquire())
	// Output:
	// reader done
	// buffer freed
	// acquire after release: false
}
