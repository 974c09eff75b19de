// Package godebug stands in for the standard library's internal/godebug in
// the copy of net/http/httputil that run.sh tests: the one setting it reads
// comes from GODEBUG, as the real package reads it at start-up.
package godebug

import (
	"os"
	"strings"
)

// Setting is one GODEBUG key.
type Setting struct{ name string }

// New returns the setting called name.
func New(name string) *Setting { return &Setting{name: name} }

// Value returns the setting's value in GODEBUG (the last one given), or ""
// when it is not set.
func (s *Setting) Value() string {
	value := ""
	for kv := range strings.SplitSeq(os.Getenv("GODEBUG"), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == s.name {
			value = v
		}
	}
	return value
}
