package teebody

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/synctest"
)

// unchargedHeld returns the capacity of the chunks tee holds without having
// charged them to its limit and budget: the chunks of a body that only
// streams, the filler's included.
func unchargedHeld(tee *Tee) int64 {
	tee.mu.Lock()
	defer tee.mu.Unlock()
	var n int64
	inLog := false
	for _, c := range tee.log {
		if c.charged == 0 {
			n += int64(cap(c.buf))
		}
		inLog = inLog || c == tee.filling
	}
	if f := tee.filling; f != nil && !inLog && f.charged == 0 {
		n += int64(cap(f.buf))
	}
	return n
}

// held returns the capacity of the chunks tee holds in memory.
func held(tee *Tee) int64 {
	tee.mu.Lock()
	defer tee.mu.Unlock()
	var n int64
	for _, c := range tee.log {
		n += int64(cap(c.buf))
	}
	return n
}

func wantReason(t *testing.T, err error, want Reason) {
	t.Helper()
	var nre NotReplayableError
	if !errors.Is(err, ErrNotReplayable) || !errors.As(err, &nre) || nre.Reason() != want {
		t.Errorf("err = %v, want a NotReplayableError with reason %v", err, want)
	}
}

// Invariant 3: a body over the limit keeps streaming to the newest follower,
// exactly, holding at most one chunk it has not read; everything behind it is
// dropped at once; replays fail with ReasonTooLarge.
func TestOverLimitStreamsToNewest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = 16 << 10
		data := randomBytes(300<<10, 5)
		src := newScriptedSource()
		budget := NewBudget(1 << 20)
		tee := New(src, WithLimit(limit), WithBudget(budget))
		old := mustReader(t, tee)
		src.feed(data[:1000])
		if _, err := old.Read(make([]byte, 10)); err != nil {
			t.Fatal(err)
		}
		newest := mustReader(t, tee)

		var got []byte
		buf := make([]byte, 3000)
		fed := 1000
		for fed < len(data) || len(got) < len(data) {
			if fed < len(data) {
				n := min(1000, len(data)-fed)
				src.feed(data[fed : fed+n])
				fed += n
				if fed == len(data) {
					src.end(io.EOF)
				}
			}
			synctest.Wait()
			if fed%7000 == 0 || fed == len(data) {
				n, err := newest.Read(buf)
				got = append(got, buf[:n]...)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("newest follower: %v after %d bytes", err, len(got))
				}
			}
			synctest.Wait()
			if inUse := budget.InUse(); inUse > limit {
				t.Fatalf("budget in use %d > limit %d", inUse, limit)
			}
			if held := unchargedHeld(tee); held > maxStreamChunk {
				t.Fatalf("while streaming, %d bytes held beyond the limit, want at most one chunk", held)
			}
		}
		for len(got) < len(data) {
			n, err := newest.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("newest follower: %v after %d bytes", err, len(got))
			}
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("newest follower got %d bytes, want the %d of the source", len(got), len(data))
		}
		if n := held(tee); n != 0 || budget.InUse() != 0 {
			t.Errorf("after the newest read everything: %d bytes held, %d charged; want 0", n, budget.InUse())
		}
		wantReason(t, tee.ReplayErr(), ReasonTooLarge)
		_, err := tee.NewReader()
		wantReason(t, err, ReasonTooLarge)
		_, err = old.Read(buf)
		wantReason(t, err, ReasonTooLarge)
		closeAndWait(t, tee)
	})
}

// A body of exactly the limit stays replayable: the Tee needs bytes beyond
// the limit, not just room for them, to give up the replay.
func TestBodyOfExactlyTheLimitIsReplayable(t *testing.T) {
	const limit = 16 << 10
	data := randomBytes(limit, 6)
	tee := New(io.NopCloser(bytes.NewReader(data)), WithLimit(limit))
	defer closeAndWait(t, tee)
	if got, err := io.ReadAll(mustReader(t, tee)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("first follower: %d bytes, %v", len(got), err)
	}
	if err := tee.ReplayErr(); err != nil {
		t.Fatalf("ReplayErr = %v, want nil", err)
	}
	if got, err := io.ReadAll(mustReader(t, tee)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("replay: %d bytes, %v", len(got), err)
	}
}

// A limit of zero keeps nothing: the first follower streams the body, and
// no replay is possible.
func TestZeroLimitStreamsOnly(t *testing.T) {
	data := randomBytes(100<<10, 7)
	tee := New(io.NopCloser(bytes.NewReader(data)), WithLimit(0))
	defer closeAndWait(t, tee)
	r := mustReader(t, tee)
	if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("first follower: %d bytes, %v", len(got), err)
	}
	_, err := tee.NewReader()
	wantReason(t, err, ReasonTooLarge)
}

// A shared budget bounds what all Tees hold together, never blocks, and
// comes back in full. A body that finds it spent takes budget back from the
// body holding more (which yields, streams on and refuses replays with
// ReasonYielded) until it would hold more than that body did; then it
// streams and refuses replays with ReasonNoBudget.
func TestBudgetSharedAndReturned(t *testing.T) {
	budget := NewBudget(8 << 10)
	first := randomBytes(8<<10, 8)
	second := randomBytes(40<<10, 9)

	a := New(io.NopCloser(bytes.NewReader(first)), WithBudget(budget))
	if got, err := io.ReadAll(mustReader(t, a)); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("a: %d bytes, %v", len(got), err)
	}
	if got := budget.InUse(); got != 8<<10 {
		t.Fatalf("budget in use = %d, want all of it (%d)", got, 8<<10)
	}

	b := New(io.NopCloser(bytes.NewReader(second)), WithBudget(budget))
	if got, err := io.ReadAll(mustReader(t, b)); err != nil || !bytes.Equal(got, second) {
		t.Fatalf("b: %d bytes, %v", len(got), err)
	}
	_, err := b.NewReader()
	wantReason(t, err, ReasonNoBudget)
	_, err = a.NewReader()
	wantReason(t, err, ReasonYielded)
	if got := budget.Yields(); got != 1 {
		t.Errorf("yields = %d, want 1", got)
	}
	if got := held(a); got != 0 {
		t.Errorf("a holds %d bytes after it yielded with everything read, want 0", got)
	}
	closeAndWait(t, b)
	closeAndWait(t, a)
	if got := budget.InUse(); got != 0 {
		t.Errorf("budget in use after both closed = %d, want 0", got)
	}
	if got := budget.Peak(); got != 8<<10 {
		t.Errorf("budget peak = %d, want %d", got, 8<<10)
	}
}

// A body that announces more than the budget or its limit could ever keep
// takes no budget back from others: it would lose its replay anyway.
func TestAnnouncedTooLargeTakesNothingBack(t *testing.T) {
	budget := NewBudget(8 << 10)
	first := randomBytes(8<<10, 8)
	a := New(io.NopCloser(bytes.NewReader(first)), WithBudget(budget))
	defer closeAndWait(t, a)
	if got, err := io.ReadAll(mustReader(t, a)); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("a: %d bytes, %v", len(got), err)
	}
	for _, limit := range []int64{
		defaultLimit, // b announces more than the budget
		4 << 10,      // b announces more than its limit
	} {
		second := randomBytes(16<<10, 9)
		b := New(io.NopCloser(bytes.NewReader(second)), WithBudget(budget), WithSizeHint(16<<10), WithLimit(limit))
		if got, err := io.ReadAll(mustReader(t, b)); err != nil || !bytes.Equal(got, second) {
			t.Fatalf("b: %d bytes, %v", len(got), err)
		}
		_, err := b.NewReader()
		wantReason(t, err, ReasonNoBudget)
		closeAndWait(t, b)
	}
	if got := budget.Peak(); got != 8<<10 {
		t.Errorf("budget peak = %d, want %d", got, 8<<10)
	}
	if r, err := a.NewReader(); err != nil {
		t.Errorf("a's replay refused (%v) for a body that announced more than it could keep", err)
	} else {
		r.Close()
	}
	if got := budget.Yields(); got != 0 {
		t.Errorf("yields = %d, want 0", got)
	}
}

// A budget of zero keeps nothing and still lets every body through.
func TestZeroBudget(t *testing.T) {
	budget := NewBudget(0)
	data := randomBytes(10<<10, 10)
	tee := New(io.NopCloser(bytes.NewReader(data)), WithBudget(budget))
	defer closeAndWait(t, tee)
	if got, err := io.ReadAll(mustReader(t, tee)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("first follower: %d bytes, %v", len(got), err)
	}
	_, err := tee.NewReader()
	wantReason(t, err, ReasonNoBudget)
}

// Invariant 3 after a response: Seal drops the bytes behind the newest
// follower at once, the rest as it reads them, and refuses new followers.
func TestSealDropsBehindNewest(t *testing.T) {
	data := randomBytes(200<<10, 11)
	budget := NewBudget(1 << 20)
	tee := New(io.NopCloser(bytes.NewReader(data)), WithBudget(budget))
	defer closeAndWait(t, tee)
	if got, err := io.ReadAll(mustReader(t, tee)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("first follower: %d bytes, %v", len(got), err)
	}
	whole := budget.InUse()
	newest := mustReader(t, tee)
	head := make([]byte, 150<<10)
	if _, err := io.ReadFull(newest, head); err != nil {
		t.Fatal(err)
	}
	tee.Seal()
	tee.mu.Lock()
	first := tee.log[0]
	keptFrom, keptTo := first.at, first.at+int64(len(first.buf))
	tee.mu.Unlock()
	if keptTo <= int64(len(head)) || keptFrom > int64(len(head)) {
		t.Errorf("after Seal the first chunk kept holds [%d, %d), want the one holding offset %d", keptFrom, keptTo, len(head))
	}
	if got := budget.InUse(); got >= whole || got != held(tee) {
		t.Errorf("after Seal the budget holds %d of %d bytes, want only the %d of the chunk(s) past offset %d",
			got, whole, held(tee), len(head))
	}
	_, err := tee.NewReader()
	wantReason(t, err, ReasonStreamedPast)
	rest, err := io.ReadAll(newest)
	if err != nil || !bytes.Equal(append(head, rest...), data) {
		t.Fatalf("newest after Seal: %d more bytes, %v", len(rest), err)
	}
	if got := budget.InUse(); got != 0 {
		t.Errorf("budget in use after the newest read all = %d, want 0", got)
	}
}

func TestNotReplayableErrorMatches(t *testing.T) {
	for _, r := range []Reason{ReasonTooLarge, ReasonNoBudget, ReasonStreamedPast, ReasonClosed, ReasonYielded} {
		var err error = notReplayable(r)
		wrapped := errors.Join(errors.New("http2: RoundTrip"), err)
		if !errors.Is(wrapped, ErrNotReplayable) {
			t.Errorf("%v: errors.Is(ErrNotReplayable) = false", r)
		}
		wantReason(t, wrapped, r)
		if r.String() == "unknown" || err.Error() == ErrNotReplayable.Error() {
			t.Errorf("%v: reason has no words of its own: %q", r, err)
		}
	}
	if errors.Is(ErrClosed, ErrNotReplayable) {
		t.Error("ErrClosed matches ErrNotReplayable")
	}
}
