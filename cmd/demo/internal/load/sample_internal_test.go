package load

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSamplesKeepTheRareKind: past maxSampleErrors GOAWAY failures, the
// first failure of another kind still shows among the samples.
func TestSamplesKeepTheRareKind(t *testing.T) {
	var r runner
	for i := range 2 * maxSampleErrors {
		r.fail(fmt.Errorf("op %d: %w", i, errors.New("http2: Transport: cannot retry err [http2: Transport received Server's graceful shutdown GOAWAY] after Request.Body was written; define Request.GetBody to avoid this error")))
	}
	r.fail(errors.New("op x: timeout"))
	r.fail(errors.New("op y: timeout"))
	if assert.Len(t, r.samples, maxSampleErrors) {
		assert.Equal(t, "op x: timeout", r.samples[maxSampleErrors-1], "the first of the rarer kind replaces the last sample")
	}
	assert.Equal(t, int64(2*maxSampleErrors+2), r.failed.Load(), "failed")
	assert.Equal(t, int64(2*maxSampleErrors), r.goaway.Load(), "GOAWAY")
}
