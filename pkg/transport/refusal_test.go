package transport

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/teebody/teebody/pkg/teebody"
)

// RefusedReplay returns the error a teebody.Tee gives when it refuses a
// replay for reason r. A real Tee makes it: teebody exports no constructor
// for the error. RefusedReplay is exported for this package's external
// tests. A reason it has no way to make fails the test: a reason added to
// teebody needs its case here.
func RefusedReplay(tb testing.TB, r teebody.Reason) error {
	tb.Helper()
	var (
		tee  *teebody.Tee
		done <-chan struct{}
	)
	switch r {
	case teebody.ReasonTooLarge:
		tee, done = readTee(tb, "x", teebody.WithLimit(0))
	case teebody.ReasonNoBudget:
		tee, done = readTee(tb, "x", teebody.WithBudget(teebody.NewBudget(0)))
	case teebody.ReasonStreamedPast:
		tee, done = readTee(tb, "x")
		tee.Seal()
	case teebody.ReasonClosed:
		tee, done = readTee(tb, "x")
		tee.Close()
	case teebody.ReasonYielded:
		// Two full 4 KiB chunks, read by the newest follower, spend the
		// budget. The first byte of a second body then takes them back.
		budget := teebody.NewBudget(8 << 10)
		tee, done = readTee(tb, strings.Repeat("x", 8<<10), teebody.WithBudget(budget))
		endTee(readTee(tb, "x", teebody.WithBudget(budget)))
	default:
		tb.Fatalf("no way to make a Tee refuse a replay for reason %v: add one to RefusedReplay", r)
	}
	_, err := tee.NewReader()
	endTee(tee, done)
	if nre, ok := errors.AsType[teebody.NotReplayableError](err); !ok || nre.Reason() != r {
		tb.Fatalf("a Tee made to refuse a replay for reason %v answered %v", r, err)
	}
	return err
}

// readTee returns a Tee around body whose first follower has read it all,
// and a channel closed once the Tee is done. opts must not hold a
// WithOnDone.
func readTee(tb testing.TB, body string, opts ...teebody.Option) (*teebody.Tee, <-chan struct{}) {
	tb.Helper()
	done := make(chan struct{})
	opts = append(opts, teebody.WithOnDone(func() { close(done) }))
	tee := teebody.New(io.NopCloser(strings.NewReader(body)), opts...)
	first, err := tee.NewReader()
	if err != nil {
		tb.Fatal(err)
	}
	if got, err := io.ReadAll(first); err != nil || string(got) != body {
		tb.Fatalf("first follower: %d of %d bytes, %v", len(got), len(body), err)
	}
	return tee, done
}

// endTee closes tee, if it is not closed yet, and waits until done, which
// readTee returned with it, is closed.
func endTee(tee *teebody.Tee, done <-chan struct{}) {
	tee.Close() // an error only if it was closed already
	<-done
}
