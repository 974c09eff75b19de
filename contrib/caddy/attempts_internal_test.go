package teebodycaddy

import (
	"io"
	"testing"
)

// unlockedBody is a body whose Read and Close share a field without a lock,
// as Caddy's reverseproxy.bodyNopCloserIfNotRead does. Read blocks until
// release is closed.
type unlockedBody struct {
	read    int
	began   chan struct{}
	release chan struct{}
}

func (b *unlockedBody) Read(p []byte) (int, error) {
	close(b.began)
	<-b.release
	b.read++
	return 0, io.EOF
}

// Close reads the field that Read writes, as Caddy's Close does.
func (b *unlockedBody) Close() error {
	_ = b.read
	return nil
}

// An attempt's Close waits for its Read in progress, so a body like Caddy's
// sees no Close concurrent with a Read (the race detector fails this test
// without bodyState.srcMu).
func TestAttemptCloseWaitsForRead(t *testing.T) {
	src := &unlockedBody{began: make(chan struct{}), release: make(chan struct{})}
	st := &bodyState{src: src}
	a, ok := st.next()
	if !ok {
		t.Fatal("the first attempt got no body")
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		a.Read(make([]byte, 1))
	}()
	<-src.began
	closeDone := make(chan struct{})
	go func() {
		defer close(closeDone)
		a.Close()
	}()
	close(src.release)
	<-closeDone
	<-readDone
}
