package bench

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestUsageText(t *testing.T) {
	u := usage{cpu: 1500 * time.Microsecond, vcsw: 7, ivcsw: 2, faults: 11, allocBytes: 4096, allocObjects: 31, gcCycles: 3,
		inReads: 9, inBytes: 65536}
	got, err := parseUsage(u.String())
	if err != nil || got != u {
		t.Fatalf("parseUsage(%q) = %+v, %v; want %+v", u.String(), got, err, u)
	}
	// Any order of the keys reads the same.
	if got, err := parseUsage("in-B=65536 gc=3 allocs=31 alloc-B=4096 minflt=11 ivcsw=2 vcsw=7 cpu-ns=1500000 in-reads=9"); err != nil || got != u {
		t.Errorf("reordered: %+v, %v; want %+v", got, err, u)
	}
	for _, bad := range []string{
		"",
		"ok",
		"cpu-ns=1 vcsw=2 ivcsw=3 minflt=9 alloc-B=4 allocs=5 gc=6 in-reads=7",              // in-B missing
		"cpu-ns=1 vcsw=2 ivcsw=3 alloc-B=4 allocs=5 gc=6 in-reads=7 in-B=8",                // minflt missing
		"cpu-ns=1 vcsw=2 ivcsw=3 minflt=9 alloc-B=4 allocs=5 gc=6 in-reads=7 in-B=8 x=9",   // unknown key
		"cpu-ns=1 cpu-ns=1 ivcsw=3 minflt=9 alloc-B=4 allocs=5 gc=6 in-reads=7 in-B=8",     // twice
		"cpu-ns=-1 vcsw=2 ivcsw=3 minflt=9 alloc-B=4 allocs=5 gc=6 in-reads=7 in-B=8",      // negative
		"cpu-ns=1.5 vcsw=2 ivcsw=3 minflt=9 alloc-B=4 allocs=5 gc=6 in-reads=7 in-B=8",     // not an integer
		"cpu-ns 1 vcsw=2 ivcsw=3 minflt=9 alloc-B=4 allocs=5 gc=6 in-reads=7 in-B=8 extra", // no '='
	} {
		if _, err := parseUsage(bad); !errors.Is(err, errUsage) {
			t.Errorf("parseUsage(%q): %v; want errUsage", bad, err)
		}
	}
}

func TestUsageSince(t *testing.T) {
	a := usage{cpu: time.Second, vcsw: 10, ivcsw: 4, faults: 20, allocBytes: 100, allocObjects: 10, gcCycles: 2, inReads: 5, inBytes: 50}
	b := usage{cpu: 3 * time.Second, vcsw: 15, ivcsw: 5, faults: 26, allocBytes: 300, allocObjects: 13, gcCycles: 4, inReads: 8, inBytes: 90}
	want := usage{cpu: 2 * time.Second, vcsw: 5, ivcsw: 1, faults: 6, allocBytes: 200, allocObjects: 3, gcCycles: 2, inReads: 3, inBytes: 40}
	if got := b.since(a); got != want {
		t.Errorf("since = %+v; want %+v", got, want)
	}
}

func TestOOPOrder(t *testing.T) {
	a := oopOrder(7, 1)
	if len(a) != len(proxySizes)*len(oopKinds) {
		t.Fatalf("%d cells; want %d", len(a), len(proxySizes)*len(oopKinds))
	}
	seen := map[oopCell]bool{}
	for _, c := range a {
		if seen[c] || !slices.Contains(proxySizes, c.size) || !slices.Contains(oopKinds, c.kind) {
			t.Errorf("cell %v twice or unknown", c)
		}
		seen[c] = true
	}
	if b := oopOrder(7, 1); !slices.Equal(a, b) {
		t.Errorf("the same seed and round gave two orders:\n%v\n%v", a, b)
	}
	// Some other round is in another order (one of them could repeat this
	// one by chance; all of ten cannot, for 16 cells).
	differs := false
	for r := uint64(2); r < 12 && !differs; r++ {
		differs = !slices.Equal(a, oopOrder(7, r))
	}
	if !differs {
		t.Errorf("ten other rounds all in the order of round 1: %v", a)
	}
}

// TestOutOfProcess runs BenchmarkOutOfProcess's processes at a small size:
// an upstream, and a proxy of each kind, through which the warm-up's uploads
// must all arrive whole (the upstream checksums them), and whose usage must
// count them.
func TestOutOfProcess(t *testing.T) {
	up, line := startChild(t, nil, roleEnv+"="+roleUpstream)
	defer up.stop(t)
	upURL, cert, _ := strings.Cut(line, " ")
	const size = 64 * kib
	for _, kind := range oopKinds {
		t.Run(kind, func(t *testing.T) {
			op := startOOPProxy(t, oopCell{size: size, kind: kind}, upURL, cert) // fails t unless every upload arrived whole
			u := op.p.usage(t)
			op.measured = u.cpu
			if u.inBytes < oopWorkers*size || u.inReads == 0 || u.allocObjects == 0 || u.cpu <= 0 {
				t.Errorf("usage after %d uploads of %d bytes: %+v", oopWorkers, size, u)
			}
			op.stop(t)
		})
	}
}
