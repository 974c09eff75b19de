package load_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teebody/teebody/cmd/demo/internal/load"
)

func TestIsGoaway(t *testing.T) {
	goaway := errors.New("http2: Transport: cannot retry err [http2: Transport received Server's graceful shutdown GOAWAY] after Request.Body was written; define Request.GetBody to avoid this error")
	assert.True(t, load.IsGoaway(fmt.Errorf("create configmap x: %w", goaway)), "Go's GOAWAY error")
	assert.True(t, load.IsGoaway(errors.New("proxy error: net/http: cannot rewind body after connection loss")), "net/http's form")
	assert.True(t, load.IsGoaway(errors.New("proxy error: ReverseProxy does an invalid Read on closed Body")), "ReverseProxy's form")
	assert.False(t, load.IsGoaway(errors.New("connection refused")))
	assert.False(t, load.IsGoaway(nil))
}

func TestResultFileRoundTrip(t *testing.T) {
	want := &load.Result{Name: "x", TotalOperations: 3, FailedOperations: 1, GoawayErrors: 1, ErrorRate: 33.3,
		Start: time.Unix(1, 0).UTC(), End: time.Unix(2, 0).UTC(), SampleErrors: []string{"boom"}}
	path := filepath.Join(t.TempDir(), "r.json")
	require.NoError(t, want.WriteFile(path))
	got, err := load.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	_, err = load.ReadFile(filepath.Join(t.TempDir(), "missing.json"))
	assert.ErrorIs(t, err, load.ErrResult, "missing file")
}
