package transport

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/teebody/teebody/pkg/teebody"
)

// sum adds up the fields that fields returned.
func sum(fields []*int64) int64 {
	var n int64
	for _, f := range fields {
		if f != nil {
			n += *f
		}
	}
	return n
}

// TestEveryReasonCounted counts one refusal of each teebody.Reason (every
// value from 1 whose String is not "unknown") and checks that it lands in
// its own field of RefusalStats and nowhere else, so that a reason added to
// teebody without its place in RefusalStats fails here instead of counting
// as another. An error that does not match teebody.ErrNotReplayable is not
// counted.
func TestEveryReasonCounted(t *testing.T) {
	var all []teebody.Reason
	for r := teebody.Reason(1); r.String() != "unknown"; r++ {
		all = append(all, r)
		tr := New(nil, DefaultConfig())
		tr.countRefusal(fmt.Errorf("http2: %w", RefusedReplay(t, r)))
		got := tr.Stats().ReplaysRefused
		fields := got.fields()
		if n, all := got.Count(r), sum(fields[:]); n != 1 || all != 1 {
			t.Errorf("reason %v: Count %d, %d refusals counted in all (%+v); want 1 and 1", r, n, all, got)
		}
	}
	if got := slices.Collect(RefusalReasons()); !slices.Equal(got, all) {
		t.Errorf("RefusalReasons() = %v, want every reason: %v", got, all)
	}
	tr := New(nil, DefaultConfig())
	tr.countRefusal(errors.New("not a refusal"))
	if got := tr.Stats().ReplaysRefused; got != (RefusalStats{}) {
		t.Errorf("an error that is not a refusal was counted: %+v", got)
	}
}

// TestEveryPassThroughCounted puts one count under each PassThroughReason
// and checks that Stats shows it in its own field and nowhere else, so that
// a reason added without its place in PassThroughStats fails here.
// TestPassThrough and the adaptive tests count real requests.
func TestEveryPassThroughCounted(t *testing.T) {
	for r := range PassThroughReasons() {
		tr := New(nil, DefaultConfig())
		tr.counters.passed[r].Add(1)
		got := tr.Stats().PassedThrough
		fields := got.fields()
		if n, all := got.Count(r), sum(fields[:]); n != 1 || all != 1 {
			t.Errorf("reason %v: Count %d, %d requests counted in all (%+v); want 1 and 1", r, n, all, got)
		}
	}
}

// TestClosedBodyReadIsATrace: in adaptive mode, a failed read of a body an
// earlier attempt closed leaves a trace of GOAWAY, though it proves
// nothing; an error of another kind leaves none.
func TestClosedBodyReadIsATrace(t *testing.T) {
	for _, tc := range []struct {
		err   error
		trace bool
	}{
		{errors.New("ReverseProxy does an invalid Read on closed Body"), true},
		{fmt.Errorf("proxy: %w", http.ErrBodyReadAfterClose), true},
		{errors.New("body closed by handler"), true},
		{errors.New("upstream said: body closed by handler"), false},
		{errors.New("connection reset by peer"), false},
	} {
		cfg := DefaultConfig()
		cfg.Adaptive = true
		tr := New(nil, cfg)
		tr.noteFailure(upstreamOf(&url.URL{Scheme: "https", Host: "upstream.test"}), tc.err)
		if got := tr.Stats().AdaptiveTraces == 1; got != tc.trace {
			t.Errorf("%v: a trace %v, want %v", tc.err, got, tc.trace)
		}
		if ShouldRetryLater(tc.err) {
			t.Errorf("ShouldRetryLater(%v) = true, want false", tc.err)
		}
	}
}
