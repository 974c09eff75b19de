package teebody

import (
	"bytes"
	"io"
	"testing"
)

// countedSource counts the Reads of the source and the most bytes one of
// them took.
type countedSource struct {
	r           io.Reader
	reads, most int
}

func (c *countedSource) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.reads++
	c.most = max(c.most, n)
	return n, err
}

func (c *countedSource) Close() error { return nil }

// A small body is read in Reads as large as what the client has sent (here
// all of it at once), not cut at the ends of its first, small chunks; what
// it holds in its log is still charged by what has arrived, exactly as when
// the bytes go straight into the log.
func TestSmallBodyReadWhole(t *testing.T) {
	for _, c := range []struct {
		size int
		hint bool
	}{{60 << 10, true}, {60 << 10, false}, {maxStreamChunk, true}, {16<<10 + 1, true}} {
		data := randomBytes(c.size, 5)
		src := &countedSource{r: bytes.NewReader(data)}
		budget := NewBudget(1 << 20)
		opts := []Option{WithBudget(budget)}
		if c.hint {
			opts = append(opts, WithSizeHint(int64(c.size)))
		}
		tee := New(src, opts...)
		got, err := io.ReadAll(mustReader(t, tee))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes (hint %v): read %d bytes, %v", c.size, c.hint, len(got), err)
		}
		if src.most != c.size || src.reads > 2 {
			t.Errorf("%d bytes (hint %v): %d source Reads, the largest %d bytes; want the body in one, then its end",
				c.size, c.hint, src.reads, src.most)
		}
		if in, most := budget.InUse(), int64(2*c.size+sizeOfClass(0)); in > most {
			t.Errorf("%d bytes (hint %v): %d bytes charged, want at most %d", c.size, c.hint, in, most)
		}
		if in, h := budget.InUse(), held(tee); in != h {
			t.Errorf("%d bytes (hint %v): %d bytes charged, %d held in the log", c.size, c.hint, in, h)
		}
		closeAndWait(t, tee)
		if in := budget.InUse(); in != 0 {
			t.Errorf("%d bytes (hint %v): %d bytes charged after the end", c.size, c.hint, in)
		}
	}
}
