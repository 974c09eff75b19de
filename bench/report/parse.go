package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The transport kinds, in the order the tables show them.
const (
	plain   = "plain"
	teebody = "teebody"
	readAll = "readall"
)

var transports = []string{plain, teebody, readAll}

// row is one benchmark configuration (a family and its parameters, say
// Proxy size=1KiB) measured with each transport.
type row struct {
	family string // "Proxy", without the Benchmark prefix
	params string // the sub-benchmark keys other than transport, "size=1KiB"
	// values[transport][unit] holds one value per round, in file order.
	values map[string]map[string][]float64
}

// set is every row of a run, in the order first seen.
type set struct {
	rows  []*row
	index map[string]*row // by family + "/" + params
	procs string          // the GOMAXPROCS suffix of the names, "" if none
}

func (s *set) family(name string) []*row {
	var out []*row
	for _, r := range s.rows {
		if r.family == name {
			out = append(out, r)
		}
	}
	return out
}

// parse reads the output of go test -bench. Lines other than results are
// skipped; a malformed result line is an error.
func parse(r io.Reader) (*set, error) {
	s := &set{index: map[string]*row{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(fields[1]); err != nil {
			continue // a benchmark's log line, not a result
		}
		if len(fields)%2 != 0 {
			return nil, fmt.Errorf("line %d: odd number of value and unit fields", n)
		}
		name, procs := splitProcs(fields[0])
		if procs != "" {
			s.procs = procs
		}
		family, params, kind := splitName(strings.TrimPrefix(name, "Benchmark"))
		if kind == "" {
			continue
		}
		key := family + "/" + params
		rw := s.index[key]
		if rw == nil {
			rw = &row{family: family, params: params, values: map[string]map[string][]float64{}}
			s.index[key] = rw
			s.rows = append(s.rows, rw)
		}
		if rw.values[kind] == nil {
			rw.values[kind] = map[string][]float64{}
		}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %q: %w", n, fields[i], err)
			}
			unit := fields[i+1]
			rw.values[kind][unit] = append(rw.values[kind][unit], v)
		}
	}
	return s, sc.Err()
}

// splitProcs splits "BenchmarkX/a=b-2" into "BenchmarkX/a=b" and "2".
func splitProcs(name string) (string, string) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name, ""
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name, ""
	}
	return name[:i], name[i+1:]
}

// splitName splits "Proxy/size=1KiB/transport=plain" into the family, the
// other parameters and the transport.
func splitName(name string) (family, params, kind string) {
	parts := strings.Split(name, "/")
	family = parts[0]
	var rest []string
	for _, p := range parts[1:] {
		if v, ok := strings.CutPrefix(p, "transport="); ok {
			kind = v
			continue
		}
		rest = append(rest, p)
	}
	return family, strings.Join(rest, "/"), kind
}

// median of the values of a unit for a transport; ok is false if there are
// none.
func (r *row) median(kind, unit string) (float64, bool) {
	vs := r.values[kind][unit]
	if len(vs) == 0 {
		return 0, false
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2], true
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
}

// max of the values of a unit for a transport over every round.
func (r *row) max(kind, unit string) (float64, bool) {
	vs := r.values[kind][unit]
	if len(vs) == 0 {
		return 0, false
	}
	return slices.Max(vs), true
}

// rounds is how many values a transport has for a unit.
func (r *row) rounds(kind, unit string) int { return len(r.values[kind][unit]) }

// ratio of the medians of a unit, num ÷ den.
func (r *row) ratio(num, den, unit string) (float64, bool) {
	a, ok1 := r.median(num, unit)
	b, ok2 := r.median(den, unit)
	if !ok1 || !ok2 || b == 0 {
		return 0, false
	}
	return a / b, true
}

// pValue is the Mann-Whitney p-value of the rounds of a unit, a against b;
// ok is false if either has no values.
func (r *row) pValue(a, b, unit string) (float64, bool) {
	va, vb := r.values[a][unit], r.values[b][unit]
	if len(va) == 0 || len(vb) == 0 {
		return 0, false
	}
	return mannWhitneyP(va, vb), true
}
