package teebody

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
	"testing/synctest"
)

// emptyReads is a source that returns (0, nil) k times before each Read that
// brings bytes, as a reader may when it has nothing yet.
type emptyReads struct {
	r       io.Reader
	k, left int
}

func (e *emptyReads) Read(p []byte) (int, error) {
	if e.left > 0 {
		e.left--
		return 0, nil
	}
	e.left = e.k
	return e.r.Read(p)
}

func (e *emptyReads) Close() error { return nil }

// Reads that bring nothing take no chunk and no budget: the chunk taken for
// the first of them waits for the bytes, and the chunk size does not grow.
func TestEmptyReadsTakeNothing(t *testing.T) {
	data := randomBytes(1<<10, 21)
	budget := NewBudget(1 << 20)
	tee := New(&emptyReads{r: iotest.HalfReader(bytes.NewReader(data)), k: 10, left: 10}, WithBudget(budget))
	defer closeAndWait(t, tee)
	if got, err := io.ReadAll(mustReader(t, tee)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("follower: %d bytes, %v", len(got), err)
	}
	if got, want := held(tee), int64(sizeOfClass(0)); got != want {
		t.Errorf("a 1 KiB body read between empty reads holds %d bytes, want one %d-byte chunk", got, want)
	}
	if got, want := budget.Peak(), int64(sizeOfClass(0)); got != want {
		t.Errorf("budget peak %d, want %d: empty reads took budget", got, want)
	}
}

// A replay's Read fills the caller's whole buffer from as many chunks as it
// needs, rather than stopping at the end of a chunk.
func TestReplayReadFillsWholeBuffer(t *testing.T) {
	data := randomBytes(100<<10, 22) // 4 + 16 + 64 KiB chunks and part of a fourth
	tee := New(io.NopCloser(bytes.NewReader(data)))
	defer closeAndWait(t, tee)
	if _, err := io.ReadAll(mustReader(t, tee)); err != nil {
		t.Fatal(err)
	}
	if n := len(tee.log); n < 3 {
		t.Fatalf("the body is in %d chunks, want several", n)
	}
	buf := make([]byte, len(data)+1)
	n, err := mustReader(t, tee).Read(buf)
	if n != len(data) || !bytes.Equal(buf[:n], data) {
		t.Errorf("one Read of a replay: %d bytes (%v), want all %d", n, err, len(data))
	}
}

// With the body's length known, the chunks exceed it by less than the
// smallest chunk, and the end is found without taking another chunk; a hint
// never sizes a chunk beyond the bytes that have arrived, so a hint too large
// costs nothing; a wrong hint changes no byte, a negative one counts as none,
// and none takes more than the limit.
func TestSizeHint(t *testing.T) {
	for _, tc := range []struct {
		name            string
		size, hint      int
		limit, wantHeld int64 // limit 0: the default
	}{
		{"right", 64 << 10, 64 << 10, 0, 64 << 10},
		{"right, odd size", 3000, 3000, 0, 4 << 10},
		{"right, just over a chunk size", 65 << 10, 65 << 10, 0, 64<<10 + 4<<10},
		{"right, between chunk sizes", 300 << 10, 300 << 10, 0, 300 << 10},
		{"right, over the largest chunk", 2<<20 + 1, 2<<20 + 1, 0, 2<<20 + 4<<10},
		{"too small", 10 << 10, 5 << 10, 0, 4<<10 + 4<<10 + 8<<10},
		{"too large", 5 << 10, 1 << 20, 0, 4<<10 + 8<<10},
		{"negative, as none", 5 << 10, -1, 0, 4<<10 + 8<<10},
		{"over the limit", 64 << 10, 1 << 20, 64 << 10, 64 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := randomBytes(tc.size, 23)
			budget := NewBudget(8 << 20)
			opts := []Option{WithBudget(budget), WithSizeHint(int64(tc.hint))}
			if tc.limit > 0 {
				opts = append(opts, WithLimit(tc.limit))
			}
			tee := New(io.NopCloser(bytes.NewReader(data)), opts...)
			defer closeAndWait(t, tee)
			for range 2 {
				if got, err := io.ReadAll(mustReader(t, tee)); err != nil || !bytes.Equal(got, data) {
					t.Fatalf("follower: %d bytes, %v", len(got), err)
				}
			}
			if got := held(tee); got != tc.wantHeld {
				t.Errorf("held %d bytes, want %d", got, tc.wantHeld)
			}
			if got := budget.Peak(); got != tc.wantHeld {
				t.Errorf("budget peak %d, want %d: a chunk was taken to find the end", got, tc.wantHeld)
			}
		})
	}
}

// The owner's Close never calls the source, even after the source returned
// io.EOF: the filler closes it then, on its own goroutine, so a source whose
// Close blocks holds up the function given with WithOnDone, never Close.
func TestCloseAfterEOFDoesNotCallSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.holdClose = make(chan struct{})
		tee, done := newTeeDone(src)
		src.feed([]byte("hello"))
		src.end(io.EOF)
		if got, err := io.ReadAll(mustReader(t, tee)); err != nil || string(got) != "hello" {
			t.Fatalf("follower: %q, %v", got, err)
		}
		synctest.Wait()
		if _, _, closes := src.stats(); closes != 1 {
			t.Errorf("source closed %d times once it returned io.EOF, want 1 (by the filler)", closes)
		}

		closed := make(chan error)
		go func() { closed <- tee.Close() }()
		synctest.Wait()
		select {
		case err := <-closed:
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatal("Close blocked on the source's Close")
		}
		select {
		case <-done:
			t.Fatal("done while the source's Close is still blocked")
		default:
		}
		close(src.holdClose)
		<-done
		if _, _, closes := src.stats(); closes != 1 {
			t.Errorf("source closed %d times, want 1", closes)
		}
	})
}

// noProgress is a source whose every Read returns neither bytes nor an error.
type noProgress struct{}

func (noProgress) Read([]byte) (int, error) { return 0, nil }

// overCount is a source whose Read claims one byte more than it was asked for.
type overCount struct{}

func (overCount) Read(p []byte) (int, error) { return len(p) + 1, nil }

// A source that stops making progress, or returns an impossible count, ends
// every follower with an error after the bytes it did bring, also when the
// probe for the end of a body of the hinted size meets it. The chunk the
// filler took for it goes back with its budget at once, before Close; the
// source is closed once, by Close, since it never returned io.EOF.
func TestSourceWithoutProgressOrValidCount(t *testing.T) {
	head := randomBytes(4<<10, 24)
	for _, tc := range []struct {
		name string
		src  io.Reader
		opts []Option
		want []byte
		err  error
	}{
		{"empty reads", noProgress{}, nil, nil, io.ErrNoProgress},
		{"empty reads after bytes", io.MultiReader(bytes.NewReader(head), noProgress{}), nil, head, io.ErrNoProgress},
		{"empty reads on the probe", io.MultiReader(bytes.NewReader(head), noProgress{}), []Option{WithSizeHint(int64(len(head)))}, head, io.ErrNoProgress},
		{"count too large", overCount{}, nil, nil, errInvalidRead},
		{"count too large on the probe", io.MultiReader(bytes.NewReader(head), overCount{}), []Option{WithSizeHint(int64(len(head)))}, head, errInvalidRead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budget := NewBudget(1 << 20)
			src := &closeRecorder{Reader: tc.src}
			tee := New(src, append(tc.opts, WithBudget(budget))...)
			for range 2 {
				got, err := io.ReadAll(mustReader(t, tee))
				if err != tc.err || !bytes.Equal(got, tc.want) {
					t.Fatalf("follower: %d bytes, %v; want %d bytes, %v", len(got), err, len(tc.want), tc.err)
				}
			}
			if got, want := budget.InUse(), held(tee); got != want {
				t.Errorf("budget in use %d before Close, want %d, what the log holds", got, want)
			}
			if n := src.closeCount(); n != 0 {
				t.Errorf("source closed %d times before Close, though it never returned io.EOF", n)
			}
			closeAndWait(t, tee)
			if n := src.closeCount(); n != 1 {
				t.Errorf("source closed %d times, want 1", n)
			}
			if got := budget.InUse(); got != 0 {
				t.Errorf("budget in use after Close = %d", got)
			}
		})
	}
}

// A Close that comes while the filler has dropped the lock to Read the
// source, and before that Read starts, is seen in time: the Read never
// starts. The hook puts the Close exactly in that gap.
func TestNoReadAfterCloseWhileUnlocked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.feed([]byte("first"))
		tee, done := newTeeDone(src)
		tee.testHookUnlocked = func() {
			if reads, _, _ := src.stats(); reads == 1 { // about to Read a second time
				if err := tee.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}
		}
		r := mustReader(t, tee)
		_, _ = r.Read(make([]byte, 8)) // starts the filler; "first" or ErrClosed, whichever wins
		<-done
		if reads, _, closes := src.stats(); reads != 1 || closes != 1 {
			t.Errorf("source: %d Reads, %d Closes; want 1, 1: a Read started after Close returned", reads, closes)
		}
	})
}
