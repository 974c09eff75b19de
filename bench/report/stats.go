package main

import (
	"math"
	"slices"
)

// mannWhitneyP returns the two-sided p-value of the Mann-Whitney U test
// that a and b come from the same distribution: the test benchstat uses.
// Without ties it is exact; with ties it uses the normal approximation with
// the tie correction. It returns 1 when either sample is empty.
func mannWhitneyP(a, b []float64) float64 {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return 1
	}
	type obs struct {
		v     float64
		fromA bool
	}
	all := make([]obs, 0, n+m)
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(x, y obs) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	// Ranks, 1-based, ties given their mean rank.
	var rankSumA, tieTerm float64
	ties := false
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2
		if t := float64(j - i); t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		for k := i; k < j; k++ {
			if all[k].fromA {
				rankSumA += rank
			}
		}
		i = j
	}
	u := rankSumA - float64(n*(n+1))/2
	if !ties {
		return exactP(n, m, int(math.Round(u)))
	}
	N := float64(n + m)
	mean := float64(n*m) / 2
	sd := math.Sqrt(float64(n*m) / 12 * ((N + 1) - tieTerm/(N*(N-1))))
	if sd == 0 {
		return 1
	}
	z := (math.Abs(u-mean) - 0.5) / sd
	return math.Min(1, math.Erfc(max(z, 0)/math.Sqrt2))
}

// exactP is the two-sided p-value of U = u for samples of sizes n and m
// without ties, from the count of the orderings that give each U.
func exactP(n, m, u int) float64 {
	// f[i][j][k]: orderings of i a's and j b's with U = k.
	f := make([][][]float64, n+1)
	for i := range f {
		f[i] = make([][]float64, m+1)
		for j := range f[i] {
			f[i][j] = make([]float64, i*j+1)
			if i == 0 || j == 0 {
				f[i][j][0] = 1
				continue
			}
			for k := range f[i][j] {
				// The largest value is an a (it beats all j b's) or a b.
				if k >= j && k-j < len(f[i-1][j]) {
					f[i][j][k] += f[i-1][j][k-j]
				}
				if k < len(f[i][j-1]) {
					f[i][j][k] += f[i][j-1][k]
				}
			}
		}
	}
	var total, low, high float64
	for k, c := range f[n][m] {
		total += c
		if k <= u {
			low += c
		}
		if k >= u {
			high += c
		}
	}
	return math.Min(1, 2*math.Min(low, high)/total)
}
