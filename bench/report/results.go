package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// The transports, in the order the tables show them.
const (
	plain    = "plain"
	floor    = "floor" // the copy floor: plain, with every byte copied once into pooled chunks
	teebody  = "teebody"
	adaptive = "adaptive" // teebody in adaptive mode, against an upstream that never sends GOAWAY
	readAll  = "readall"
)

// results holds every measurement of a run: results[row][transport][unit]
// lists the values of that benchmark row (its name without the transport),
// one per round.
type results struct {
	rows  []string // in the order first seen
	value map[string]map[string]map[string][]float64
	procs string // GOMAXPROCS of the run, from the names
}

// readResults reads go test -bench output (any number of rounds) with
// benchfmt. Units stay as the benchmarks reported them (ns/op, MB/s, p99-s).
func readResults(r io.Reader, name string) (*results, error) {
	rs := &results{value: map[string]map[string]map[string][]float64{}}
	br := benchfmt.NewReader(r, name)
	for br.Scan() {
		res, ok := br.Result().(*benchfmt.Result)
		if !ok {
			continue // a syntax error or unit metadata; br.Err reports the former
		}
		base, parts := res.Name.Parts()
		row := strings.TrimPrefix(string(base), "Benchmark")
		transport := ""
		for _, p := range parts {
			switch s := string(p); {
			case strings.HasPrefix(s, "-"):
				rs.procs = s[1:]
			case strings.HasPrefix(s, "/transport="):
				transport = strings.TrimPrefix(s, "/transport=")
			default:
				row += s
			}
		}
		if transport == "" {
			continue
		}
		if rs.value[row] == nil {
			rs.value[row] = map[string]map[string][]float64{}
			rs.rows = append(rs.rows, row)
		}
		if rs.value[row][transport] == nil {
			rs.value[row][transport] = map[string][]float64{}
		}
		for _, v := range res.Values {
			unit, x := v.Unit, v.Value
			if v.OrigUnit != "" {
				unit, x = v.OrigUnit, v.OrigValue
			}
			rs.value[row][transport][unit] = append(rs.value[row][transport][unit], x)
		}
	}
	if err := br.Err(); err != nil {
		return nil, err
	}
	return rs, nil
}

// family returns the rows of one benchmark (Proxy, Sweep, ...) whose name
// contains every one of params.
func (rs *results) family(name string, params ...string) []string {
	var out []string
	for _, r := range rs.rows {
		base, _, _ := strings.Cut(r, "/")
		if base == name && containsAll(r, params) {
			out = append(out, r)
		}
	}
	return out
}

func containsAll(s string, subs []string) bool {
	for _, p := range subs {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func (rs *results) sample(row, transport, unit string) *benchmath.Sample {
	vs := rs.value[row][transport][unit]
	if len(vs) == 0 {
		return nil
	}
	return benchmath.NewSample(slices.Clone(vs), &benchmath.DefaultThresholds)
}

// median returns the median of a row's values for a transport and unit.
func (rs *results) median(row, transport, unit string) (float64, bool) {
	s := rs.sample(row, transport, unit)
	if s == nil {
		return 0, false
	}
	return benchmath.AssumeNothing.Summary(s, 0.95).Center, true
}

// max returns the largest of a row's values for a transport and unit.
func (rs *results) max(row, transport, unit string) (float64, bool) {
	vs := rs.value[row][transport][unit]
	if len(vs) == 0 {
		return 0, false
	}
	return slices.Max(vs), true
}

// ratio compares transport a with b on a row: the ratio of their medians,
// and the p-value of the Mann-Whitney U test over the rounds (benchstat's
// test), or -1 when there are too few rounds to test. Since every round ran
// both, round i of a is also compared with round i of b: lo, mid and hi are
// the smallest, the median and the largest of those per-round ratios, which
// a burst of outside load moves less than the medians (zero without pairs),
// and ciLo and ciHi the distribution-free 95% confidence interval of mid
// (benchmath's, from the order statistics: infinite below 6 rounds, or
// without pairs).
type ratio struct {
	v, p        float64
	ok          bool
	lo, mid, hi float64
	ciLo, ciHi  float64
}

func (rs *results) ratio(row, a, b, unit string) ratio {
	sa, sb := rs.sample(row, a, unit), rs.sample(row, b, unit)
	if sa == nil || sb == nil {
		return ratio{}
	}
	ma := benchmath.AssumeNothing.Summary(sa, 0.95).Center
	mb := benchmath.AssumeNothing.Summary(sb, 0.95).Center
	if mb == 0 {
		return ratio{}
	}
	r := ratio{v: ma / mb, p: -1, ok: true, ciLo: math.Inf(-1), ciHi: math.Inf(1)}
	if len(sa.Values) > 1 && len(sb.Values) > 1 {
		r.p = benchmath.AssumeNothing.Compare(sa, sb).P
	}
	va, vb := rs.value[row][a][unit], rs.value[row][b][unit]
	if len(va) == len(vb) && len(va) > 1 {
		var per []float64
		for i := range va {
			if vb[i] != 0 {
				per = append(per, va[i]/vb[i])
			}
		}
		if len(per) == len(va) {
			s := benchmath.NewSample(per, &benchmath.DefaultThresholds)
			r.lo, r.hi = s.Values[0], s.Values[len(s.Values)-1]
			sum := benchmath.AssumeNothing.Summary(s, 0.95)
			r.mid, r.ciLo, r.ciHi = sum.Center, sum.Lo, sum.Hi
		}
	}
	return r
}

func (r ratio) String() string {
	if !r.ok {
		return "–"
	}
	if r.p < 0 {
		return fmt.Sprintf("%.2f×", r.v)
	}
	return fmt.Sprintf("%.2f× (p=%.2f)", r.v, r.p)
}

// point is the ratio a goal is judged on: the median of the rounds' ratios
// one by one, or the ratio of the medians when the rounds do not pair.
func (r ratio) point() float64 {
	if r.mid == 0 {
		return r.v
	}
	return r.mid
}

// withCI is the ratio of the rounds one by one, its 95% confidence interval
// and the p-value, or String's form when the rounds do not pair.
func (r ratio) withCI() string {
	if r.mid == 0 {
		return r.String()
	}
	ci := "CI ∞ below 6 rounds"
	if !math.IsInf(r.ciLo, 0) && !math.IsInf(r.ciHi, 0) {
		ci = fmt.Sprintf("CI %.2f–%.2f", r.ciLo, r.ciHi)
	}
	return fmt.Sprintf("%.2f× (%s, p=%.2f)", r.mid, ci, r.p)
}

// param returns the value of key in a row name ("Proxy/size=1MiB/...").
func param(row, key string) string {
	for p := range strings.SplitSeq(row, "/") {
		if k, v, ok := strings.Cut(p, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// bySize sorts rows by their body size ("size=1KiB", "size=16MiB"), smallest
// first, keeping the order of rows of the same size.
func bySize(rows []string) []string {
	slices.SortStableFunc(rows, func(a, b string) int { return cmp.Compare(sizeBytes(a), sizeBytes(b)) })
	return rows
}

// sizeBytes is the body size a row names, in bytes, or 0 if it names none.
func sizeBytes(row string) int64 {
	s := param(row, "size")
	for _, u := range []struct {
		suffix string
		scale  int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"B", 1}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				return 0
			}
			return v * u.scale
		}
	}
	return 0
}
