package transport

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/teebody/teebody/pkg/teebody"
)

// TestAllocsBodyTraceNone pins that the trace's calls in RoundTrip,
// GetBody and send allocate nothing for a context without a BodyTrace.
func TestAllocsBodyTraceNone(t *testing.T) {
	ctx := WithReport(context.Background(), new(Report)) // hooks, but no trace
	refusal := teebody.ErrNotReplayable
	allocs := testing.AllocsPerRun(100, func() {
		hs := hooksOf(ctx)
		tracePassThrough(hs, PassThroughNoBody)
		rt := newRequestTrace(hs)
		_ = rt.body(http.NoBody, true)
		rt.refused(refusal)
		rt.answered()
		traceResend(ctx, errors.ErrUnsupported)
		if rt != nil {
			t.Fatal("a context without a BodyTrace got a trace")
		}
	})
	if allocs != 0 {
		t.Errorf("the trace's calls allocate %.1f times without a BodyTrace; want 0", allocs)
	}
}
