package load_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teebody/teebody/cmd/demo/internal/load"
)

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
