package refcount_test

import (
	"fmt"

	"github.com/teebody/teebody/pkg/refcount"
)

// A buffer shared by an owner and a reader goroutine is freed by whichever
// of them lets go last, exactly once.
func Example() {
	type buffer struct {
		refs refcount.Count // the owner's reference, from the start
		data []byte
	}
	b := &buffer{data: []byte("body")}
	free := func() { fmt.Println("buffer freed"); b.data = nil }

	readerDone := make(chan struct{})
	if b.refs.Acquire() { // the reader's reference
		go func() {
			defer close(readerDone)
			fmt.Printf("reader read %q\n", b.data)
			if b.refs.Release() {
				free()
			}
		}()
	}
	<-readerDone
	if b.refs.Release() { // the owner's reference, the last
		free()
	}
	fmt.Println("acquire after release:", b.refs.Acquire())
	// Output:
	// reader read "body"
	// buffer freed
	// acquire after release: false
}
