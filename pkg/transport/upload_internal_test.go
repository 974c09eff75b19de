package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/teebody/teebody/pkg/teebody"
)

// probeCtx is a context that the test cancels. It counts the functions
// that context.AfterFunc registered through its AfterFunc method and that
// neither ran nor were stopped. Its AfterFunc calls registering, if set,
// once it has registered f.
type probeCtx struct {
	context.Context // Background, for Deadline and Value
	done            chan struct{}
	registering     func()

	mu sync.Mutex
	fs map[*func()]bool // guarded by mu: registered, not run, not stopped
}

func newProbeCtx() *probeCtx {
	return &probeCtx{Context: context.Background(), done: make(chan struct{}), fs: map[*func()]bool{}}
}

func (c *probeCtx) Done() <-chan struct{} { return c.done }

func (c *probeCtx) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

func (c *probeCtx) AfterFunc(f func()) func() bool {
	c.mu.Lock()
	c.fs[&f] = true
	c.mu.Unlock()
	if c.registering != nil {
		c.registering()
	}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		ok := c.fs[&f]
		delete(c.fs, &f)
		return ok
	}
}

func (c *probeCtx) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.done)
	for f := range c.fs {
		go (*f)()
	}
	clear(c.fs)
}

func (c *probeCtx) registered() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.fs)
}

// uploading returns a Transport and the sealed Tee of a request whose body
// is still streaming: its follower has read some of the body, too much for
// the budget, so that each Transport.end counts one budget refusal.
func uploading(t *testing.T) (*Transport, *teebody.Tee, io.ReadCloser) {
	budget := teebody.NewBudget(1)
	tr := New(nil, Config{Budget: budget})
	tee := teebody.New(io.NopCloser(bytes.NewReader(make([]byte, 1<<20))), teebody.WithBudget(budget))
	body, err := tee.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := body.Read(make([]byte, 32<<10)); err != nil {
		t.Fatal(err)
	}
	tee.Seal()
	if nre, ok := errors.AsType[teebody.NotReplayableError](tee.ReplayErr()); !ok || nre.Reason() != teebody.ReasonNoBudget {
		t.Fatalf("ReplayErr() = %v, want a no_budget refusal", tee.ReplayErr())
	}
	return tr, tee, body
}

// ends returns how many times Transport.end ran for tee.
func ends(tr *Transport) int64 { return tr.Stats().BudgetRefusals }

// TestEndAfterUpload runs Transport.end exactly once in each order of the
// upload's end and the context's, and leaves no function registered with
// the context.
func TestEndAfterUpload(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, tr *Transport, tee *teebody.Tee, body io.ReadCloser, ctx *probeCtx)
	}{
		{"streamed before", func(t *testing.T, tr *Transport, tee *teebody.Tee, body io.ReadCloser, ctx *probeCtx) {
			io.Copy(io.Discard, body)
			tr.endAfterUpload(tee, ctx)
			if n := ends(tr); n != 1 {
				t.Errorf("ended %d times at once, want 1", n)
			}
			ctx.cancel()
		}},
		{"streamed first", func(t *testing.T, tr *Transport, tee *teebody.Tee, body io.ReadCloser, ctx *probeCtx) {
			tr.endAfterUpload(tee, ctx)
			if n, r := ends(tr), ctx.registered(); n != 0 || r != 1 {
				t.Errorf("while streaming: ended %d times, %d functions registered; want 0, 1", n, r)
			}
			io.Copy(io.Discard, body)
			if n, r := ends(tr), ctx.registered(); n != 1 || r != 0 {
				t.Errorf("streamed: ended %d times, %d functions registered; want 1, 0", n, r)
			}
			ctx.cancel()
		}},
		{"streamed while registering", func(t *testing.T, tr *Transport, tee *teebody.Tee, body io.ReadCloser, ctx *probeCtx) {
			ctx.registering = func() { io.Copy(io.Discard, body) }
			tr.endAfterUpload(tee, ctx)
			if n, r := ends(tr), ctx.registered(); n != 1 || r != 0 {
				t.Errorf("streamed: ended %d times, %d functions registered; want 1, 0", n, r)
			}
			ctx.cancel()
		}},
		{"canceled while registering", func(t *testing.T, tr *Transport, tee *teebody.Tee, body io.ReadCloser, ctx *probeCtx) {
			ctx.registering = ctx.cancel
			tr.endAfterUpload(tee, ctx)
			synctest.Wait()
			io.Copy(io.Discard, body)
		}},
		{"closed while registering", func(t *testing.T, tr *Transport, tee *teebody.Tee, body io.ReadCloser, ctx *probeCtx) {
			ctx.registering = func() { tee.Close() }
			tr.endAfterUpload(tee, ctx)
			ctx.cancel()
		}},
		{"context first", func(t *testing.T, tr *Transport, tee *teebody.Tee, body io.ReadCloser, ctx *probeCtx) {
			tr.endAfterUpload(tee, ctx)
			ctx.cancel()
			synctest.Wait()
			if n := ends(tr); n != 1 {
				t.Errorf("context done: ended %d times, want 1", n)
			}
			if _, err := io.Copy(io.Discard, body); !errors.Is(err, teebody.ErrClosed) {
				t.Errorf("reading on after the end: %v, want ErrClosed", err)
			}
			body.Close()
		}},
		{"closed first", func(t *testing.T, tr *Transport, tee *teebody.Tee, body io.ReadCloser, ctx *probeCtx) {
			tee.Close()
			tr.endAfterUpload(tee, ctx)
			ctx.cancel()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr, tee, body := uploading(t)
				ctx := newProbeCtx()
				tc.run(t, tr, tee, body, ctx)
				synctest.Wait()
				if n, r := ends(tr), ctx.registered(); n != 1 || r != 0 {
					t.Errorf("at the end: ended %d times, %d functions registered; want 1, 0", n, r)
				}
			})
		})
	}
}
