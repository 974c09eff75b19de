package quantile_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/teebody/teebody/internal/quantile"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestOf(t *testing.T) {
	var ms []time.Duration
	for i := 1; i <= 100; i++ {
		ms = append(ms, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		samples []time.Duration
		q       float64
		want    time.Duration
	}{
		{ms, 0.50, 50 * time.Millisecond},
		{ms, 0.95, 95 * time.Millisecond},
		{ms, 0.99, 99 * time.Millisecond},
		{ms, 1, 100 * time.Millisecond},
		{ms, 0.001, time.Millisecond},
		{ms[:3], 0.5, 2 * time.Millisecond},
		{ms[:4], 0.5, 2 * time.Millisecond},
		{[]time.Duration{3 * time.Millisecond}, 0.99, 3 * time.Millisecond},
		{nil, 0.5, 0},
	} {
		if got := quantile.Of(tc.samples, tc.q); got != tc.want {
			t.Errorf("Of(%d samples, %v) = %v, want %v", len(tc.samples), tc.q, got, tc.want)
		}
	}
}
