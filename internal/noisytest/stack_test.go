package noisytest_test

import (
	"bytes"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/noisytest"
	"github.com/teebody/teebody/pkg/transport"
)

// Writes through a Stack with room in its budget are all answered 200.
func TestWrites(t *testing.T) {
	s := noisytest.New(t, noisytest.Options{
		Config: transport.DefaultConfig(),
		Upstream: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			noisytest.Consume(w, r, 0, 0, nil)
		}),
	})
	if retryLater, failed := s.Writes(40, bytes.Repeat([]byte("w"), 64<<10)); retryLater != 0 || failed != 0 {
		t.Errorf("%d writes answered 429, %d failed; want none", retryLater, failed)
	}
}

// Stall opens its uploads one after another, and each one's sent bytes
// reach the upstream while it stalls.
func TestStall(t *testing.T) {
	arrived := make(chan string, 4)
	s := noisytest.New(t, noisytest.Options{
		Config: transport.DefaultConfig(),
		Upstream: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			noisytest.Consume(w, r, 0, 2<<10, func() { arrived <- r.Header.Get("X-Upload") })
		}),
	})
	var opened []int
	s.Stall(t, noisytest.Uploads{
		N:      3,
		Length: 1 << 20,
		Sent:   2 << 10,
		Body:   bytes.Repeat([]byte("s"), 2<<10),
		Header: http.Header{"X-Upload": {"stalled"}},
		Settled: func(open int) error {
			opened = append(opened, open)
			select {
			case h := <-arrived:
				if h != "stalled" {
					return errors.New("the upload's header field did not reach the upstream")
				}
				return nil
			case <-time.After(10 * time.Second):
				return errors.New("the upload's sent bytes did not reach the upstream")
			}
		},
	})
	if !slices.Equal(opened, []int{1, 2, 3}) {
		t.Errorf("Settled saw %v open, want [1 2 3]", opened)
	}
}
