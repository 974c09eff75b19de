package teebody

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// AfterStreamed's function runs once, when the newest follower's Read
// returns the source's end, without the Tee's lock (it closes the Tee
// itself), before that Read returns; not when an older follower ends, and
// not again.
func TestAfterStreamedRunsAtNewestEnd(t *testing.T) {
	data := randomBytes(100<<10, 1)
	for _, name := range []string{"eof", "error", "close"} {
		t.Run(name, func(t *testing.T) {
			var src io.Reader = bytes.NewReader(data)
			srcErr := io.EOF
			if name == "error" {
				srcErr = errors.New("client went away")
				src = io.MultiReader(src, iotest.ErrReader(srcErr))
			}
			tee, done := newTeeDone(&closeRecorder{Reader: src})
			older := mustReader(t, tee)
			newest := mustReader(t, tee)
			tee.Seal()
			runs := 0
			if !tee.AfterStreamed(func() { runs++; tee.Close() }) {
				t.Fatal("AfterStreamed did not keep its function with the newest follower still reading")
			}
			if _, err := older.Read(make([]byte, 10)); err == nil {
				t.Fatal("an older follower of a sealed Tee read on")
			}
			older.Close()
			if runs != 0 {
				t.Fatal("the function ran when an older follower ended")
			}
			buf := make([]byte, 32<<10)
			var got []byte
			for name != "close" || len(got) < len(data)/2 {
				n, err := newest.Read(buf)
				got = append(got, buf[:n]...)
				if err != nil {
					if !errors.Is(err, srcErr) {
						t.Fatalf("newest follower: %v; want %v", err, srcErr)
					}
					break
				}
				if runs != 0 {
					t.Fatalf("the function ran after %d bytes, before the end", len(got))
				}
			}
			if name == "close" {
				newest.Close()
			} else if !bytes.Equal(got, data) {
				t.Fatalf("got %d bytes; want the %d of the source", len(got), len(data))
			}
			if runs != 1 {
				t.Fatalf("the function ran %d times by the time the newest follower was done; want 1", runs)
			}
			<-done // it closed the Tee
			newest.Close()
			newest.Read(buf)
			if runs != 1 {
				t.Fatalf("the function ran %d times; want 1", runs)
			}
		})
	}
}

// AfterStreamed keeps nothing when there is nothing to wait for: the newest
// follower is done already, none was handed out, or the Tee is closed; and a
// function kept when Close comes first never runs.
func TestAfterStreamedNothingToWaitFor(t *testing.T) {
	never := func() { t.Error("AfterStreamed's function ran") }

	none := New(&closeRecorder{Reader: bytes.NewReader([]byte("x"))})
	if none.AfterStreamed(never) {
		t.Error("kept with no follower handed out")
	}
	closeAndWait(t, none)

	read := New(&closeRecorder{Reader: bytes.NewReader([]byte("whole"))})
	if _, err := io.ReadAll(mustReader(t, read)); err != nil {
		t.Fatal(err)
	}
	read.Seal()
	if read.AfterStreamed(never) {
		t.Error("kept with the newest follower at its end")
	}
	closeAndWait(t, read)

	closed := New(&closeRecorder{Reader: bytes.NewReader([]byte("x"))})
	mustReader(t, closed)
	closeAndWait(t, closed)
	if closed.AfterStreamed(never) {
		t.Error("kept after Close")
	}

	first := New(&closeRecorder{Reader: bytes.NewReader([]byte("unread"))})
	r := mustReader(t, first)
	first.Seal()
	if !first.AfterStreamed(never) {
		t.Fatal("not kept with the newest follower unread")
	}
	closeAndWait(t, first)
	r.Read(make([]byte, 8))
	r.Close()
}
