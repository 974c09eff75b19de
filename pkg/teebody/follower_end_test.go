package teebody

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"testing/synctest"
)

// A follower's Read that takes the last bytes of a source that has ended
// returns the source's terminal result with them, in the same call, as the
// source's own Read did (net/http's bodies return io.EOF with the last bytes,
// and an HTTP/2 transport then ends the stream with the last DATA frame); a
// Read that stops short of the end returns no error; and the newest
// follower's AfterStreamed function runs in that last Read.
func TestReadReturnsTheEndWithTheLastBytes(t *testing.T) {
	data := randomBytes(10<<10, 26)
	errMidway := errors.New("client went away")
	for _, tc := range []struct {
		name string
		src  io.Reader
		end  error
	}{
		{"eof", bytes.NewReader(data), io.EOF},
		{"error", io.MultiReader(bytes.NewReader(data), iotest.ErrReader(errMidway)), errMidway},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tee := New(io.NopCloser(tc.src))
			defer closeAndWait(t, tee)
			if got, err := readAllEach(mustReader(t, tee), 4<<10); !bytes.Equal(got, data) || err != nil && err != tc.end {
				t.Fatalf("first follower: %d bytes, %v", len(got), err)
			}
			replay := mustReader(t, tee)
			if n, err := replay.Read(make([]byte, 1000)); n != 1000 || err != nil {
				t.Fatalf("a Read short of the end: %d, %v; want 1000, nil", n, err)
			}
			ran := 0
			if !tee.AfterStreamed(func() { ran++ }) {
				t.Fatal("AfterStreamed did not keep its function with the newest follower reading")
			}
			buf := make([]byte, len(data))
			n, err := replay.Read(buf)
			if n != len(data)-1000 || !bytes.Equal(buf[:n], data[1000:]) || err != tc.end {
				t.Errorf("the Read of the last bytes: %d bytes, %v; want %d bytes and %v", n, err, len(data)-1000, tc.end)
			}
			if ran != 1 {
				t.Errorf("AfterStreamed's function ran %d times in the Read that returned the end, want 1", ran)
			}
		})
	}
}

// The first follower, waiting when the source returns its last bytes with
// io.EOF, gets both from one Read.
func TestFirstReadPassesOnTheEndWithTheLastBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.endWithLast = true
		tee := New(src)
		defer closeAndWait(t, tee)
		r := mustReader(t, tee)
		type result struct {
			n   int
			err error
		}
		got := make(chan result, 1)
		buf := make([]byte, 64)
		go func() {
			n, err := r.Read(buf)
			got <- result{n, err}
		}()
		synctest.Wait() // the follower waits, the filler is in a source Read
		src.feed([]byte("hello"))
		src.end(io.EOF)
		res := <-got
		if res.n != 5 || string(buf[:res.n]) != "hello" || res.err != io.EOF {
			t.Errorf("Read = %d (%q), %v; want 5 (\"hello\"), io.EOF", res.n, buf[:res.n], res.err)
		}
	})
}

// Usage.ReadFrom counts a follower whose Read returned the source's end even
// without bytes (an empty body, a source that fails at once), and not one
// whose only Read was refused.
func TestReadFromCountsTheSourcesEnd(t *testing.T) {
	errAtOnce := errors.New("client went away")
	for _, tc := range []struct {
		name string
		src  io.Reader
		end  error
	}{
		{"empty body", bytes.NewReader(nil), io.EOF},
		{"fails at once", iotest.ErrReader(errAtOnce), errAtOnce},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tee := New(io.NopCloser(tc.src))
			defer closeAndWait(t, tee)
			if n, err := mustReader(t, tee).Read(make([]byte, 8)); n != 0 || err != tc.end {
				t.Fatalf("Read = %d, %v; want 0, %v", n, err, tc.end)
			}
			if u := tee.Usage(); u.ReadFrom != 1 || !u.NewestRead {
				t.Errorf("Usage = %+v, want ReadFrom 1, NewestRead true: the follower got the source's end", u)
			}
		})
	}

	t.Run("refused", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tee := New(io.NopCloser(bytes.NewReader([]byte("body"))))
			defer closeAndWait(t, tee)
			older := mustReader(t, tee)
			newest := mustReader(t, tee)
			tee.Seal()
			_, err := older.Read(make([]byte, 8))
			wantReason(t, err, ReasonStreamedPast)
			if u := tee.Usage(); u.ReadFrom != 0 {
				t.Errorf("Usage = %+v, want ReadFrom 0: the older follower's Read was refused at once", u)
			}
			if got, err := io.ReadAll(newest); err != nil || string(got) != "body" {
				t.Fatalf("newest follower: %q, %v", got, err)
			}
			if u := tee.Usage(); u.ReadFrom != 1 || !u.NewestRead {
				t.Errorf("Usage = %+v, want ReadFrom 1, NewestRead true", u)
			}
		})
	})
}
