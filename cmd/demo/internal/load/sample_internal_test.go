package load

import (
	"errors"
	"fmt"
	"testing"
)

// TestSamplesKeepTheRareKind: past maxSampleErrors GOAWAY failures, the
// first failure of another kind still shows among the samples.
func TestSamplesKeepTheRareKind(t *testing.T) {
	var r runner
	for i := range 2 * maxSampleErrors {
		r.fail(fmt.Errorf("op %d: http2: Transport: cannot retry err [http2: Transport received Server's graceful shutdown GOAWAY] after Request.Body was written; define Request.GetBody to avoid this error", i))
	}
	r.fail(errors.New("op x: timeout"))
	r.fail(errors.New("op y: timeout"))
	if len(r.samples) != maxSampleErrors || r.samples[maxSampleErrors-1] != "op x: timeout" {
		t.Fatalf("samples = %q", r.samples)
	}
	if r.failed.Load() != 2*maxSampleErrors+2 || r.goaway.Load() != 2*maxSampleErrors {
		t.Fatalf("counted %d failed, %d GOAWAY", r.failed.Load(), r.goaway.Load())
	}
}
