package main

import (
	"math"
	"testing"
)

func TestMannWhitneyP(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b []float64
		want float64
	}{
		// Complete separation of 5 and 5: 2 of C(10,5) = 252 orderings.
		{"separated", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252},
		{"separated, swapped", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 2.0 / 252},
		// Interleaved evenly: U is at its mean, p = 1.
		{"interleaved", []float64{1, 4, 5, 8}, []float64{2, 3, 6, 7}, 1},
		{"empty", nil, []float64{1}, 1},
	} {
		if got := mannWhitneyP(c.a, c.b); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: p = %v, want %v", c.name, got, c.want)
		}
	}
	// With ties: the normal approximation, which for complete separation of
	// 4 and 4 is well below 0.05 and for identical samples is 1.
	if p := mannWhitneyP([]float64{1, 1, 2, 2}, []float64{5, 5, 6, 6}); p >= 0.05 {
		t.Errorf("separated with ties: p = %v, want < 0.05", p)
	}
	if p := mannWhitneyP([]float64{3, 3, 3}, []float64{3, 3, 3}); p != 1 {
		t.Errorf("identical: p = %v, want 1", p)
	}
}
