package transport_test

import (
	"os"
	"strings"
	"testing"
)

// FuzzUpstream plays a hostile but honest HTTP/2 upstream against the
// Transport: what it does with each attempt of each request is the fuzz
// input's script (fuzzupstream_script_test.go), and the oracle
// (fuzzupstream_oracle_test.go) checks, after every input, that no write
// was applied twice or with wrong bytes, that a 429 went only to a write
// never applied, that a 2xx is the upstream's own answer, that the
// Transport let go of everything, and that it delivered whatever
// net/http's transport alone delivered for the same script.
//
// With TEEBODY_FUZZ_NOSEEDS set, it starts from the empty input alone, so
// that testdata/plant.sh shows what the search finds by itself.
func FuzzUpstream(f *testing.F) {
	f.Add([]byte{})
	if os.Getenv("TEEBODY_FUZZ_NOSEEDS") == "" {
		for _, s := range upstreamSeeds() {
			f.Add(encodeScript(s))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := decodeScript(b)
		violations := playScript(t, s)
		if len(violations) > 0 {
			t.Fatalf("%s\n%s", s, strings.Join(violations, "\n"))
		}
	})
}

// playScript runs s through our Transport and, where checkDiff can judge
// it, through net/http's transport alone, and returns the oracle's
// findings.
func playScript(t *testing.T, s *script) []string {
	ours := runScript(t, s, false)
	v := checkRun(s, ours)
	if diffSound(s) {
		v = append(v, checkDiff(s, runScript(t, s, true), ours)...)
	}
	return v
}
