package teebody_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"golang.org/x/sync/semaphore"
)

// Fact 8, why the Budget only ever calls TryAcquire: a semaphore.Weighted
// Acquire larger than the whole semaphore waits until its context ends, and
// one that fits the size but not what is free now queues, so smaller
// requests that would fit are refused behind it.
func TestFactSemaphoreWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sem := semaphore.NewWeighted(10)
		acquire := func(n int64) (context.CancelFunc, <-chan error) {
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- sem.Acquire(ctx, n) }()
			synctest.Wait()
			select {
			case err := <-done:
				t.Fatalf("Acquire(%d) returned %v, want it waiting", n, err)
			default:
			}
			return cancel, done
		}

		cancel, done := acquire(11) // more than the whole semaphore
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Acquire(11) returned %v, want context.Canceled", err)
		}

		if !sem.TryAcquire(6) {
			t.Fatal("TryAcquire(6) of an empty 10 failed")
		}
		cancel, done = acquire(5) // fits the size, not what is free
		if sem.TryAcquire(1) {
			t.Error("TryAcquire(1) succeeded behind a waiting Acquire(5)")
		}
		cancel()
		<-done
		if !sem.TryAcquire(1) {
			t.Error("TryAcquire(1) failed once the waiter left")
		}
	})
}
