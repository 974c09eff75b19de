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

func TestLastReleaseReportsTrue(t *testing.T) {
	var c Count
	for range 2 {
		if !c.Acquire() {
			t.Fatal("Acquire on a live count reported false")
		}
	}
	for i := range 2 {
		if c.Release() {
			t.Fatalf("Release %d reported the last with references left", i+1)
		}
	}
	if !c.Release() {
		t.Fatal("the last Release reported false")
	}
}

func TestAcquireAfterLastReleaseReportsFalse(t *testing.T) {
	var c Count
	c.Release()
	for range 2 {
		if c.Acquire() {
			t.Fatal("Acquire after the last Release reported true")
		}
	}
}

func TestOverReleasePanics(t *testing.T) {
	for name, over := range map[string]func(c *Count){
		"after the last":       func(c *Count) { c.Release(); c.Release() },
		"after failed Acquire": func(c *Count) { c.Release(); c.Acquire(); c.Release() },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.HasPrefix(msg, "refcount: ") {
					t.Fatalf("panic %q, want a refcount:-prefixed message", msg)
				}
			}()
			over(new(Count))
		})
	}
}

// Holders that acquired before the owner let go keep the count from
// dropping to zero until the last of them gives its reference back; that
// Release, and only that one, reports true, and Acquire then fails.
func TestHoldersDelayTheLast(t *testing.T) {
	const holders = 8
	var c Count
	var lasts atomic.Int64
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
			if c.Release() {
				lasts.Add(1)
			}
		})
	}
	inside.Wait()
	if c.Release() {
		t.Fatalf("the owner's Release reported the last with %d holders inside", holders)
	}
	close(ownerLetGo)
	wg.Wait()
	if n := lasts.Load(); n != 1 {
		t.Fatalf("%d Releases reported the last, want 1", n)
	}
	if c.Acquire() {
		t.Fatal("Acquire after the last Release reported true")
	}
}

// Many goroutines acquiring and releasing while the owner lets go: exactly
// one Release reports true, no Acquire succeeds after it, and the last
// Release sees every write its holders made (checked by the race detector
// too).
func TestConcurrentAcquireRelease(t *testing.T) {
	for range 200 {
		var c Count
		var lasts, freed, taken atomic.Int64
		var writes [8]int // each holder's count of its references
		last := func() {
			lasts.Add(1)
			total := 0
			for _, w := range writes {
				total += w
			}
			if n := taken.Load(); int64(total) != n {
				t.Errorf("the last Release saw the writes of %d references of the %d taken", total, n)
			}
			freed.Store(1)
		}
		var wg sync.WaitGroup
		for i := range writes {
			wg.Go(func() {
				for range 50 {
					if c.Acquire() {
						taken.Add(1)
						if freed.Load() != 0 {
							t.Error("Acquire reported true after the last Release")
						}
						writes[i]++
						if c.Release() {
							last()
						}
					}
				}
			})
		}
		if c.Release() {
			last()
		}
		wg.Wait()
		if n := lasts.Load(); n != 1 {
			t.Fatalf("%d Releases reported the last, want 1", n)
		}
	}
}
