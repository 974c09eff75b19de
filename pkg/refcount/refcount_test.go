package refcount

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestReleaseRunsOnceAtZero(t *testing.T) {
	var calls int
	c := New(func() { calls++ })
	for range 2 {
		if !c.Acquire() {
			t.Fatal("Acquire on a live count reported false")
		}
	}
	c.Release()
	c.Release()
	if calls != 0 || c.released() {
		t.Fatalf("released with references left (calls %d)", calls)
	}
	c.Release()
	if calls != 1 || !c.released() {
		t.Fatalf("release ran %d times at zero, want 1", calls)
	}
}

func TestAcquireAfterReleaseReportsFalse(t *testing.T) {
	c := New(func() {})
	c.Release()
	if c.Acquire() {
		t.Fatal("Acquire after release reported true")
	}
	if !c.released() {
		t.Fatal("a failed Acquire revived the count")
	}
}

func TestOverReleasePanics(t *testing.T) {
	for name, over := range map[string]func(c *Count){
		"after release":        func(c *Count) { c.Release(); c.Release() },
		"after failed Acquire": func(c *Count) { c.Release(); c.Acquire(); c.Release() },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.HasPrefix(msg, "refcount: ") {
					t.Fatalf("panic %q, want a refcount:-prefixed message", msg)
				}
			}()
			over(New(func() {}))
		})
	}
}

func TestNewNilReleasePanics(t *testing.T) {
	defer func() {
		if msg, _ := recover().(string); !strings.HasPrefix(msg, "refcount: ") {
			t.Fatalf("panic %q, want a refcount:-prefixed message", msg)
		}
	}()
	New(nil)
}

// Holders that acquired before the owner let go keep the release from
// running until the last of them gives its reference back; then it runs
// exactly once, and Acquire fails.
func TestHoldersDelayRelease(t *testing.T) {
	const holders = 8
	var calls atomic.Int64
	c := New(func() { calls.Add(1) })
	var inside, wg sync.WaitGroup
	inside.Add(holders)
	ownerLetGo := make(chan struct{})
	for range holders {
		wg.Go(func() {
			ok := c.Acquire()
			inside.Done()
			if !ok {
				t.Error("Acquire on a live count reported false")
				return
			}
			<-ownerLetGo
			if n := calls.Load(); n != 0 {
				t.Errorf("release ran %d times while a holder was inside", n)
			}
			c.Release()
		})
	}
	inside.Wait()
	c.Release()
	if n := calls.Load(); n != 0 {
		t.Fatalf("release ran %d times when the owner let go with %d holders inside", n, holders)
	}
	close(ownerLetGo)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("release ran %d times after the last holder let go, want 1", n)
	}
	if c.Acquire() {
		t.Fatal("Acquire after the release reported true")
	}
}

// Many goroutines acquiring and releasing while the owner lets go, for the
// race detector: the release runs exactly once, and no Acquire succeeds
// after it ran.
func TestConcurrentAcquireRelease(t *testing.T) {
	for range 200 {
		var calls atomic.Int64
		c := New(func() { calls.Add(1) })
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 50 {
					if c.Acquire() {
						if n := calls.Load(); n != 0 {
							t.Errorf("Acquire reported true after the release ran %d times", n)
						}
						c.Release()
					}
				}
			})
		}
		c.Release()
		wg.Wait()
		if n := calls.Load(); n != 1 {
			t.Fatalf("release ran %d times, want 1", n)
		}
	}
}
