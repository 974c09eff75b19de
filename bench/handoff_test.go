package bench

import (
	"io"
	"testing"
	"testing/synctest"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/teebody"
)

// pieceSource is a request body as a socket gives it: each piece the test
// sends on pieces arrives whole, and a Read returns what is left of the
// current piece, as much as fits, or waits for the next one; a closed
// pieces is the end. reads counts the Reads that returned bytes. It is read
// by one goroutine.
type pieceSource struct {
	pieces chan []byte
	rest   []byte
	reads  int
}

func (s *pieceSource) Read(p []byte) (int, error) {
	if len(s.rest) == 0 {
		piece, ok := <-s.pieces
		if !ok {
			return 0, io.EOF
		}
		s.rest = piece
	}
	n := copy(p, s.rest)
	s.rest = s.rest[n:]
	s.reads++
	return n, nil
}

func (*pieceSource) Close() error { return nil }

// TestHandOffsPerUpload counts the goroutine hand-offs of one upload
// through a Tee: the times its reader (in a proxy, the HTTP/2 transport's
// body writer, reading 512 KiB at a time) waits in Read for the filler and
// is woken by it. A plain proxy's body writer reads the socket itself: the
// same waits for the client, and no hand-off.
//
// The client sends the body in 32 KiB pieces, and the test sends each only
// once every goroutine is blocked, so the reader is waiting whenever bytes
// arrive: it is woken at least once per piece and once for the end. The
// filler may need several source Reads per piece (each stops at the end of
// its chunk) and wakes the reader after each, so the reader is woken at
// most once per source Read that brings bytes, and once for the end. Which
// of the two it is in between depends on the scheduler: the test checks
// the bounds and logs the count.
func TestHandOffsPerUpload(t *testing.T) {
	const piece = 32 * kib
	for _, size := range []int{64 * kib, 1 * mib} {
		t.Run(proxytest.SizeName(size), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := &pieceSource{pieces: make(chan []byte)}
				teeDone := make(chan struct{})
				tee := teebody.New(src, teebody.WithSizeHint(int64(size)), teebody.WithOnDone(func() { close(teeDone) }))
				r, err := tee.NewReader()
				if err != nil {
					t.Fatal(err)
				}
				var wakeUps, got int
				done := make(chan error, 1)
				go func() {
					buf := make([]byte, 512*kib)
					for {
						n, err := r.Read(buf)
						wakeUps++
						got += n
						if err != nil {
							done <- err
							return
						}
					}
				}()
				data := payload()[:size]
				for off := 0; off < size; off += piece {
					synctest.Wait() // the reader waits for bytes, the filler for the socket
					src.pieces <- data[off:min(off+piece, size)]
				}
				synctest.Wait()
				close(src.pieces)
				if err := <-done; err != io.EOF || got != size {
					t.Fatalf("the reader got %d bytes and %v, want %d and io.EOF", got, err, size)
				}
				tee.Close()
				<-teeDone
				pieces := (size + piece - 1) / piece
				t.Logf("%s in %d pieces: %d source Reads with bytes, %d hand-offs to the reader",
					proxytest.SizeName(size), pieces, src.reads, wakeUps)
				if wakeUps < pieces+1 || wakeUps > src.reads+1 {
					t.Errorf("%d hand-offs, want from %d (one per piece and the end) to %d (one per source Read and the end)",
						wakeUps, pieces+1, src.reads+1)
				}
			})
		})
	}
}
