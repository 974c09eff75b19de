package teebody

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/synctest"
)

// errFuzzSource is the error a fuzzed source may end with.
var errFuzzSource = errors.New("fuzz source failed")

// bodyByte is the byte at offset i of every fuzzed body: a pattern that
// repeats only every 64 KiB, so that a byte delivered at the wrong offset
// shows.
func bodyByte(i int) byte { return byte(i*7 + i>>8) }

// fuzzFollower is the model of one follower: what it has read so far, and
// the Read running on it, if any.
type fuzzFollower struct {
	r       io.ReadCloser
	got     []byte
	closed  bool
	done    bool // it returned a terminal result
	pending chan readResult
}

type readResult struct {
	b   []byte
	err error
}

// FuzzTee drives a Tee through a random sequence of operations — source
// pieces (empty ones too) and its end, reads of random sizes, new followers,
// follower and owner closes, Seal, and a rival body on the same budget that
// grows, so that either may yield to the other — under tiny limits and
// budgets, right and wrong size hints, and checks every follower against a
// plain model of the body (the package's invariants), and who closes
// the source when.
func FuzzTee(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 0},
		{3, 0, 0, 200, 4, 0, 50, 0, 90, 1, 4, 0, 255, 3, 4, 1, 255, 4, 0, 255},
		{4, 2, 0, 255, 0, 255, 0, 255, 3, 4, 0, 255, 4, 1, 10, 6, 4, 0, 255, 4, 0, 255, 1, 4, 0, 255},
		{1, 1, 0, 40, 3, 4, 1, 30, 4, 0, 30, 0, 40, 4, 0, 200, 4, 1, 200, 2, 4, 0, 200, 4, 1, 200},
		{5, 3, 0, 255, 0, 255, 4, 0, 255, 6, 3, 4, 0, 255, 0, 255, 4, 0, 255, 7, 4, 0, 255, 3},
		{2, 4, 0, 100, 3, 5, 0, 4, 1, 100, 0, 100, 1, 4, 1, 255, 4, 1, 255},
		{6, 0, 0, 255, 0, 255, 0, 255, 0, 255, 4, 0, 9, 3, 4, 1, 255, 2, 4, 0, 255, 4, 1, 255},
		{6, 5, 0, 100, 4, 0, 255, 0, 50, 3, 4, 0, 255, 4, 1, 255, 1, 4, 1, 255}, // hint 100, body longer
		{4, 13, 0, 255, 0, 255, 4, 0, 255, 0, 255, 3, 4, 1, 255, 4, 0, 255},     // hint 4096
		// Hint 4096, a body of exactly 4096 bytes, then empty reads and one
		// byte more for the probe, the end with the last byte, two followers.
		{11, 13, 3, 0, 64, 64, 4, 0, 100, 100, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 4, 0, 255, 255, 3, 4, 1, 255, 255},
		// Hint 4096, Close while the probe's Read is pending.
		{3, 13, 3, 0, 64, 64, 4, 0, 255, 255, 7, 4, 0, 255, 255},
		// Empty reads into a fresh chunk, Seal between them, then bytes.
		{5, 3, 3, 0, 64, 64, 4, 0, 255, 255, 0, 0, 0, 6, 0, 0, 0, 0, 100, 100, 4, 0, 255, 255, 4, 0, 255, 255},
		// The source ends after an empty read into a fresh chunk.
		{5, 3, 3, 0, 64, 64, 4, 0, 255, 255, 0, 0, 0, 1, 4, 0, 255, 255},
		// Close while the filler, holding a fresh chunk, waits for the newest.
		{5, 3, 3, 0, 64, 64, 4, 0, 10, 10, 6, 0, 0, 0, 7},
		// Over the limit while a Read is pending: the body streams to the
		// newest follower, the filler waiting for it between chunks.
		{3, 0, 3, 4, 0, 1, 1, 0, 100, 100, 4, 0, 255, 255, 4, 0, 255, 255, 0, 100, 100, 4, 0, 255, 255, 4, 0, 255, 255, 1, 4, 0, 255, 255, 4, 0, 255, 255, 4, 0, 255, 255},
		// A budget that takes a smaller chunk, then none.
		{6, 3, 3, 4, 0, 1, 1, 0, 100, 100, 0, 100, 100, 4, 0, 255, 255, 4, 0, 255, 255, 4, 0, 255, 255, 4, 0, 255, 255, 4, 0, 255, 255, 1, 4, 0, 255, 255},
		// The Tee grows, then the rival: the Tee, holding more, yields to it
		// with bytes its follower has not read yet, streams them on, then
		// refuses a replay.
		{6, 4, 3, 0, 70, 70, 0, 70, 70, 0, 70, 70, 0, 70, 70, 4, 0, 94, 94, 4, 0, 94, 94, 8, 70, 70, 8, 70, 70, 8, 70, 70, 4, 0, 94, 94, 3, 0, 70, 70, 4, 0, 94, 94},
		// The rival grows first and yields to the Tee, which keeps its replay.
		{6, 4, 8, 70, 70, 8, 70, 70, 8, 70, 70, 8, 70, 70, 3, 0, 70, 70, 0, 70, 70, 4, 0, 94, 94, 4, 0, 94, 94, 0, 70, 70, 4, 0, 94, 94, 3, 4, 1, 94, 94},
		// The rival reads ahead what its follower has not read: it holds
		// budget but has nothing to give, so the Tee, once it has bytes for a
		// chunk with nothing free, streams; then the rival's follower
		// catches up and the next chunk the Tee fills takes the rival's.
		{6, 4, 8, 1, 1, 9, 0, 70, 70, 9, 0, 70, 70, 9, 0, 70, 70, 9, 0, 70, 70, 3, 0, 70, 70, 4, 0, 94, 94, 0, 70, 70, 4, 0, 94, 94, 9, 1, 0, 70, 70, 4, 0, 94, 94, 0, 70, 70, 4, 0, 94, 94, 3},
		// The rival's follower reads part of what it read ahead, finishing
		// some chunks, while the Tee grows and takes a replay.
		{6, 4, 8, 70, 70, 8, 70, 70, 9, 0, 70, 70, 9, 2, 40, 3, 0, 70, 70, 4, 0, 94, 94, 0, 70, 70, 4, 0, 94, 94, 9, 2, 200, 0, 70, 70, 4, 0, 94, 94, 9, 1, 3, 4, 1, 255, 255},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) < 2 {
			return
		}
		synctest.Test(t, func(t *testing.T) { runFuzzScript(t, script) })
	})
}

func runFuzzScript(t *testing.T, script []byte) {
	limits := []int64{0, 1, 100, 4096, 5000, 20000, 1 << 20}
	totals := []int64{-1, 0, 3000, 8192, 30000} // -1: no budget
	limit := limits[int(script[0])%len(limits)]
	endWithLast := int(script[0])/len(limits)%2 == 1 // the source's end comes with its last bytes
	var budget *Budget
	opts := []Option{WithLimit(limit)}
	if total := totals[int(script[1])%len(totals)]; total >= 0 {
		budget = NewBudget(total)
		opts = append(opts, WithBudget(budget))
	}
	// A size hint, right or wrong: the bytes must be the source's either way.
	hints := []int64{0, 100, 4096, 5000, 70000}
	if hint := hints[int(script[1])/len(totals)%len(hints)]; hint > 0 {
		opts = append(opts, WithSizeHint(hint))
	}
	script = script[2:]
	next := func() int {
		if len(script) == 0 {
			return 0
		}
		b := script[0]
		script = script[1:]
		return int(b)
	}

	src := newScriptedSource()
	src.endWithLast = endWithLast
	tee, done := newTeeDone(src, opts...)
	var rival *rivalBody // a second body on the budget, which yields or makes the Tee yield
	if budget != nil {
		rival = newRival(budget)
	}
	var (
		fed          int   // bytes fed to the source
		emptyRun     int   // empty pieces fed since the last bytes; kept under maxEmptyReads
		ended        error // how the source ended, once it did
		sawEOF       bool  // a follower returned io.EOF: the filler has seen it
		sealed, over bool
		followers    []*fuzzFollower
		check        = func(format string, args ...any) { t.Helper(); t.Errorf(format, args...) }
	)

	// collect takes the results of the Reads that have returned and checks
	// each against the model.
	collect := func() {
		for i, f := range followers {
			if f.pending == nil {
				continue
			}
			select {
			case res := <-f.pending:
				f.pending = nil
				if want := fed; len(f.got)+len(res.b) > want {
					check("follower %d read past the bytes fed: %d > %d", i, len(f.got)+len(res.b), want)
				}
				for j, b := range res.b {
					if b != bodyByte(len(f.got)+j) {
						check("follower %d: byte at offset %d is %d, want %d", i, len(f.got)+j, b, bodyByte(len(f.got)+j))
						break
					}
				}
				f.got = append(f.got, res.b...)
				switch err := res.err; {
				case err == nil:
				case errors.Is(err, ErrClosed):
					if !f.closed && !over {
						check("follower %d: ErrClosed while neither it nor the Tee is closed", i)
					}
					f.done = true
				case errors.Is(err, ErrNotReplayable):
					var nre NotReplayableError
					errors.As(err, &nre)
					if i == len(followers)-1 {
						// Bytes are dropped only behind the newest
						// follower, which streams on whatever happens.
						check("the newest follower %d refused: %v", i, err)
					}
					if nre.Reason() == ReasonTooLarge && int64(fed) <= limit {
						check("follower %d: too large with %d bytes fed under a limit of %d", i, fed, limit)
					}
					if nre.Reason() == ReasonStreamedPast && !sealed {
						check("follower %d: streamed past, but the Tee was never sealed", i)
					}
					if nre.Reason() == ReasonYielded && budget == nil {
						check("follower %d: yielded, without a budget to yield to", i)
					}
					f.done = true
				case err == ended:
					if len(f.got) != fed {
						check("follower %d: source's end %v after %d of %d bytes", i, err, len(f.got), fed)
					}
					sawEOF = sawEOF || err == io.EOF
					f.done = true
				default:
					check("follower %d: unexpected error %v", i, err)
					f.done = true
				}
			default:
			}
		}
	}

	for steps := 0; len(script) > 0 && steps < 200; steps++ {
		switch op := next() % 10; op {
		case 0: // feed the source
			if ended != nil {
				break
			}
			n := next() * next() % 5001 // 0: a Read that brings nothing
			if n == 0 && emptyRun >= maxEmptyReads/2 {
				n = 1 // never io.ErrNoProgress: the model has no place for it
			}
			if n == 0 {
				emptyRun++
			} else {
				emptyRun = 0
			}
			piece := bodyAt(fed, n)
			fed += n
			src.feed(piece)
		case 1, 2: // end the source
			if ended != nil {
				break
			}
			ended = io.EOF
			if op == 2 {
				ended = errFuzzSource
			}
			src.end(ended)
		case 3: // a new follower
			r, err := tee.NewReader()
			if err != nil {
				var nre NotReplayableError
				if !errors.As(err, &nre) {
					check("NewReader: %v is not a NotReplayableError", err)
					break
				}
				switch {
				case nre.Reason() == ReasonClosed && !over:
					check("NewReader: closed, but the Tee is not")
				case nre.Reason() == ReasonStreamedPast && !sealed:
					check("NewReader: streamed past, but the Tee was never sealed")
				case nre.Reason() == ReasonYielded && budget == nil:
					check("NewReader: yielded, without a budget to yield to")
				case nre.Reason() == ReasonTooLarge && int64(fed) <= limit:
					check("NewReader: too large with %d bytes fed under a limit of %d", fed, limit)
				case len(followers) == 0 && !over:
					check("the first NewReader failed: %v", err)
				case !over && !sealed && budget == nil && int64(fed) <= limit:
					check("NewReader refused (%v) a body that fits", err)
				}
				break
			}
			followers = append(followers, &fuzzFollower{r: r})
		case 4: // a read of a random size
			if len(followers) == 0 {
				break
			}
			f := followers[next()%len(followers)]
			size := next() * next() % 9001 // 0 too
			if f.pending != nil {
				break
			}
			ch := make(chan readResult, 1)
			f.pending = ch
			go func() {
				buf := make([]byte, size)
				n, err := f.r.Read(buf)
				ch <- readResult{buf[:n], err}
			}()
		case 5: // a follower closes
			if len(followers) == 0 {
				break
			}
			f := followers[next()%len(followers)]
			f.closed = true
			f.r.Close()
		case 6:
			if !over {
				sealed = true
			}
			tee.Seal()
		case 7:
			err := tee.Close()
			if over && err == nil || !over && err != nil {
				check("Close (already closed: %v) returned %v", over, err)
			}
			over = true
			// All the budget is back at once, but for the chunk of a source
			// Read still pending, which comes back as soon as that Read
			// returns: the source's Close, on its own goroutine, ends it.
			synctest.Wait()
			if budget != nil && budget.InUse() != rival.held() {
				check("budget in use after Close and the pending Read = %d, the rival holds %d", budget.InUse(), rival.held())
			}
		case 8: // the rival grows by a piece, which its follower reads
			if rival != nil {
				rival.grow(t, next()*next()%5001)
			}
		case 9: // the rival's client sends without its follower reading, or it reads
			if rival == nil {
				break
			}
			switch next() % 3 {
			case 0:
				rival.send(next() * next() % 5001)
			case 1:
				rival.read(t, rival.unread)
			case 2:
				rival.read(t, next()*64%(rival.unread+1))
			}
		}
		synctest.Wait()
		collect()
		checkBounds(t, tee, limit, budget)
		if budget != nil {
			checkYieldKey(t, tee, budget)
			checkYieldKey(t, rival.tee, budget)
		}
		// The filler closes the source once it returned io.EOF; nothing
		// else closes it before the request is over.
		switch _, _, closes := src.stats(); {
		case closes > 1:
			check("source closed %d times", closes)
		case sawEOF && closes != 1:
			check("a follower saw io.EOF but the source is not closed")
		case !over && closes != 0 && ended != io.EOF:
			check("source closed before the request is over, without io.EOF")
		}
	}

	if !over {
		tee.Close()
		over = true
	}
	synctest.Wait()
	collect()
	for i, f := range followers {
		if f.pending != nil {
			check("follower %d: a Read still blocked after Close", i)
		}
	}
	<-done
	if rival != nil {
		rival.close(t)
	}
	if budget != nil && budget.InUse() != 0 {
		check("budget in use at the end = %d", budget.InUse())
	}
	if _, after, closes := src.stats(); after != 0 || closes != 1 {
		check("source: %d Reads after Close, %d Closes", after, closes)
	}
	// A follower that read the whole body, with a source that ended, proves
	// nothing was lost in the middle.
	for i, f := range followers {
		if len(f.got) > fed || !bytes.Equal(f.got, bodyPrefix(len(f.got))) {
			check("follower %d: bytes differ from the body's first %d", i, len(f.got))
		}
	}
}

// bodyPrefix returns the first n bytes of a fuzzed body.
func bodyPrefix(n int) []byte { return bodyAt(0, n) }

// bodyAt returns the n bytes of a fuzzed body at offset off.
func bodyAt(off, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = bodyByte(off + i)
	}
	return b
}

// checkBounds checks invariant 3: what a Tee holds stays within its limit
// and the budget, plus at most one chunk that is not charged (a body that
// only streams). Charged chunks that the newest follower has not read yet
// may stay after Seal: they are within the limit, and it still needs them.
func checkBounds(t *testing.T, tee *Tee, limit int64, budget *Budget) {
	t.Helper()
	tee.mu.Lock()
	charged := tee.charged
	tee.mu.Unlock()
	if charged > max(limit, 0) {
		t.Errorf("charged %d bytes, over the limit of %d", charged, limit)
	}
	if budget != nil && budget.InUse() > budget.Total() {
		t.Errorf("budget in use %d over its total %d", budget.InUse(), budget.Total())
	}
	if held := unchargedHeld(tee); held > maxStreamChunk {
		t.Errorf("%d bytes held beyond the limit and the budget, more than one chunk", held)
	}
}

// rivalBody is a second body on the fuzzed Tee's budget: a Tee fed and read
// piece by piece by one follower, which must stream its exact bytes whether
// it keeps its budget, yields it, or takes it from the fuzzed Tee. Its
// client may send ahead of what its follower reads (unread), so that it
// holds budget that it has not read and so could not give.
type rivalBody struct {
	tee    *Tee
	done   <-chan struct{} // closed once tee is done
	src    *scriptedSource
	r      io.ReadCloser
	fed    int
	unread int // bytes fed that the follower has not read
}

func newRival(budget *Budget) *rivalBody {
	src := newScriptedSource()
	tee, done := newTeeDone(src, WithBudget(budget))
	r, _ := tee.NewReader() // the first reader of a fresh Tee
	return &rivalBody{tee: tee, done: done, src: src, r: r}
}

// grow feeds the rival n bytes and reads them, and any it had not read,
// through its follower.
func (rb *rivalBody) grow(t *testing.T, n int) {
	t.Helper()
	rb.send(n)
	rb.read(t, rb.unread)
}

// send feeds the rival n bytes that its follower does not read yet.
func (rb *rivalBody) send(n int) {
	rb.src.feed(bodyAt(rb.fed, n))
	rb.fed += n
	rb.unread += n
}

// read reads the next n of the bytes fed through the rival's follower.
func (rb *rivalBody) read(t *testing.T, n int) {
	t.Helper()
	off := rb.fed - rb.unread
	got := make([]byte, n)
	if _, err := io.ReadFull(rb.r, got); err != nil || !bytes.Equal(got, bodyAt(off, n)) {
		t.Errorf("rival: %d bytes at %d differ or fail: %v", n, off, err)
	}
	rb.unread -= n
}

// held returns what the rival holds of the budget, or 0 for no rival.
func (rb *rivalBody) held() int64 {
	if rb == nil {
		return 0
	}
	rb.tee.mu.Lock()
	defer rb.tee.mu.Unlock()
	return rb.tee.charged
}

func (rb *rivalBody) close(t *testing.T) {
	t.Helper()
	if err := rb.tee.Close(); err != nil {
		t.Errorf("rival Close: %v", err)
	}
	<-rb.done
}

// checkYieldKey checks what the budget knows of tee: while tee is
// replayable, it is among the bodies that can yield exactly when a yield
// would free something (the charge of the full chunks its newest follower
// has read), and its key is that amount; otherwise it is not among them.
func checkYieldKey(t *testing.T, tee *Tee, budget *Budget) {
	t.Helper()
	tee.mu.Lock()
	defer tee.mu.Unlock()
	budget.mu.Lock()
	defer budget.mu.Unlock()
	replayable := tee.replayErr == nil && !tee.over
	var want int64
	if replayable && tee.newest != nil {
		for _, c := range tee.log {
			if len(c.buf) < cap(c.buf) || c.at+int64(len(c.buf)) > tee.newest.off {
				break
			}
			want += c.charged
		}
	}
	inHeap := tee.slot >= 0 && tee.slot < len(budget.yieldable) && budget.yieldable[tee.slot] == tee
	switch {
	case tee.slot >= 0 && !inHeap:
		t.Errorf("slot %d does not hold the Tee", tee.slot)
	case replayable && tee.freeable != want:
		t.Errorf("freeable %d, but a yield would free %d", tee.freeable, want)
	case inHeap != (want > 0):
		t.Errorf("among the bodies that can yield: %v; a yield would free %d (replayable %v)", inHeap, want, replayable)
	case inHeap && tee.yieldKey != want:
		t.Errorf("yield key %d, but a yield would free %d", tee.yieldKey, want)
	}
}
