package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// sweepTable writes the concurrency sweep: for each body size and number of
// uploads in flight, throughput and CPU against plain, and what an in-flight
// upload holds beyond plain's.
func sweepTable(w io.Writer, rs *results) {
	rows := rs.family("Sweep")
	if len(rows) == 0 {
		return
	}
	// By body size, then by uploads in flight, whatever order they ran in.
	slices.SortStableFunc(rows, func(a, b string) int {
		if c := strings.Compare(param(a, "size"), param(b, "size")); c != 0 {
			return c
		}
		x, _ := strconv.Atoi(param(a, "conc"))
		y, _ := strconv.Atoi(param(b, "conc"))
		return x - y
	})
	fmt.Fprintf(w, "| body | in flight | throughput teebody ÷ plain | readall ÷ plain | CPU teebody ÷ plain | "+
		"heap + stacks per upload above plain, teebody | readall | goroutines per upload above plain, teebody | readall |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range rows {
		cells := []string{param(row, "size"), param(row, "conc"),
			rs.ratio(row, teebody, plain, "MB/s").String(),
			rs.ratio(row, readAll, plain, "MB/s").String(),
			rs.ratio(row, teebody, plain, "cpu-s").String()}
		for _, k := range []string{teebody, readAll} {
			if v, ok := extraPerRequest(rs, row, k); ok {
				cells = append(cells, fmt.Sprintf("%.1f KiB", v/1024))
			} else {
				cells = append(cells, "–")
			}
		}
		for _, k := range []string{teebody, readAll} {
			t, ok1 := rs.median(row, k, "goroutines/req")
			p, ok2 := rs.median(row, plain, "goroutines/req")
			if ok1 && ok2 {
				cells = append(cells, fmt.Sprintf("%+.2f", t-p))
			} else {
				cells = append(cells, "–")
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
}

// A series is one line of a plot: a y value for each x position.
type series struct {
	name  string
	color string
	dash  bool
	y     []float64 // NaN where there is no figure
}

// sweepSVG draws the sweep as two panels, throughput ÷ plain and KiB held
// per in-flight upload above plain, against the uploads in flight. It
// writes nothing if the run has no sweep.
func sweepSVG(w io.Writer, rs *results) bool {
	var levels []string
	sizes := []string{}
	for _, row := range rs.family("Sweep") {
		if c := param(row, "conc"); !slices.Contains(levels, c) {
			levels = append(levels, c)
		}
		if s := param(row, "size"); !slices.Contains(sizes, s) {
			sizes = append(sizes, s)
		}
	}
	if len(levels) == 0 {
		return false
	}
	colors := map[string]string{teebody: "#1f77b4", readAll: "#d62728"}
	var thr, mem []series
	for i, size := range sizes {
		for _, k := range []string{teebody, readAll} {
			t := series{name: k + ", " + size, color: colors[k], dash: i > 0}
			m := t
			for _, c := range levels {
				row := findRow(rs, "Sweep", "size="+size, "conc="+c)
				r := rs.ratio(row, k, plain, "MB/s")
				t.y = append(t.y, ifOK(r.v, r.ok))
				v, ok := extraPerRequest(rs, row, k)
				m.y = append(m.y, ifOK(v/1024, ok))
			}
			thr = append(thr, t)
			mem = append(mem, m)
		}
	}
	const width, height = 920, 360
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	panel(w, 60, "Throughput ÷ plain (higher is better)", levels, thr, 1)
	panel(w, 520, "KiB per in-flight upload above plain", levels, mem, math.NaN())
	fmt.Fprintln(w, "</svg>")
	return true
}

func findRow(rs *results, family string, params ...string) string {
	if rows := rs.family(family, params...); len(rows) > 0 {
		return rows[0]
	}
	return ""
}

func ifOK(v float64, ok bool) float64 {
	if !ok {
		return math.NaN()
	}
	return v
}

// panel draws one plot at x0: a frame 360×240, the levels evenly spaced on
// the x axis (they grow geometrically), y from the smallest value (or 0) to
// the largest, a dotted line at ref (or at 0 when values go below it), and a
// legend.
func panel(w io.Writer, x0 float64, title string, levels []string, ss []series, ref float64) {
	const pw, ph, y0 = 360.0, 240.0, 40.0
	top, bottom := 0.0, 0.0
	for _, s := range ss {
		for _, v := range s.y {
			if !math.IsNaN(v) {
				top, bottom = math.Max(top, v), math.Min(bottom, v)
			}
		}
	}
	if !math.IsNaN(ref) {
		top = math.Max(top, ref)
	}
	top = niceCeil(top * 1.1)
	if bottom < 0 {
		bottom = -niceCeil(-bottom * 1.1)
		if math.IsNaN(ref) {
			ref = 0
		}
	}
	px := func(i int) float64 { return x0 + pw*float64(i)/float64(max(len(levels)-1, 1)) }
	py := func(v float64) float64 { return y0 + ph - ph*(v-bottom)/(top-bottom) }
	fmt.Fprintf(w, `<text x="%.0f" y="20" font-weight="bold">%s</text>`+"\n", x0, title)
	fmt.Fprintf(w, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#888"/>`+"\n", x0, y0, pw, ph)
	for i := 0; i <= 4; i++ {
		v := bottom + (top-bottom)*float64(i)/4
		fmt.Fprintf(w, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", x0, x0+pw, py(v), py(v))
		fmt.Fprintf(w, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", x0-6, py(v)+4, strconv.FormatFloat(v, 'g', 3, 64))
	}
	for i, l := range levels {
		fmt.Fprintf(w, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", px(i), y0+ph+16, l)
	}
	fmt.Fprintf(w, `<text x="%.0f" y="%.0f" text-anchor="middle">uploads in flight</text>`+"\n", x0+pw/2, y0+ph+34)
	if !math.IsNaN(ref) {
		fmt.Fprintf(w, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#444" stroke-dasharray="2,3"/>`+"\n",
			x0, x0+pw, py(ref), py(ref))
	}
	for j, s := range ss {
		var pts []string
		for i, v := range s.y {
			if !math.IsNaN(v) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(i), py(v)))
				fmt.Fprintf(w, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", px(i), py(v), s.color)
			}
		}
		dash := ""
		if s.dash {
			dash = ` stroke-dasharray="6,4"`
		}
		fmt.Fprintf(w, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), s.color, dash)
		ly := y0 + ph + 50 + 14*float64(j/2)
		lx := x0 + 180*float64(j%2)
		fmt.Fprintf(w, `<line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="%s" stroke-width="2"%s/>`+"\n", lx, lx+24, ly-4, ly-4, s.color, dash)
		fmt.Fprintf(w, `<text x="%.0f" y="%.0f">%s</text>`+"\n", lx+30, ly, s.name)
	}
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}
