package teebody

import (
	"fmt"
	"io"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

var benchSizes = []int{1 << 10, 64 << 10, 1 << 20, 16 << 20}

// BenchmarkFollower measures a body read once through a Tee (New, one
// follower read to the end, Close, Done), beside a plain io.Copy of the same
// source: the cost of keeping the body replayable.
func BenchmarkFollower(b *testing.B) {
	for _, size := range benchSizes {
		data := randomBytes(size, 13)
		name := fmt.Sprintf("size=%s", proxytest.SizeName(size))
		b.Run(name+"/io.Copy", func(b *testing.B) {
			src := &rewindable{}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				src.Reset(data)
				if _, err := io.Copy(io.Discard, readerOnly{src}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/teebody", func(b *testing.B) { benchmarkTee(b, data, 1) })
		// The first follower and one replay, as after a GOAWAY.
		b.Run(name+"/teebody-replay", func(b *testing.B) { benchmarkTee(b, data, 2) })
	}
}

// benchmarkTee reads data through a Tee by readers followers in turn, each
// to the end, then closes the Tee and waits until it is done.
func benchmarkTee(b *testing.B, data []byte, readers int) {
	src := &rewindable{}
	done := make(chan struct{}, 1)
	onDone := WithOnDone(func() { done <- struct{}{} })
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(data)
		tee := New(src, onDone)
		for range readers {
			r, err := tee.NewReader()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, r); err != nil {
				b.Fatal(err)
			}
		}
		tee.Close()
		<-done
	}
}

// readerOnly hides every method but Read, so that io.Copy reads the source
// through a buffer as it reads a follower, instead of calling WriteTo.
type readerOnly struct{ io.Reader }
