package main

import (
	"sort"
	"strings"
)

// diff lists the lines that only old has ("-") and those that only new has
// ("+"): records are sorted sets of lines, so this is their whole difference.
func diff(old, new []byte) string {
	had := lineSet(old)
	has := lineSet(new)
	var out []string
	for l := range had {
		if !has[l] {
			out = append(out, "-"+l)
		}
	}
	for l := range has {
		if !had[l] {
			out = append(out, "+"+l)
		}
	}
	// By line, removals before additions of the same line's prefix.
	sort.Slice(out, func(i, j int) bool {
		if out[i][1:] != out[j][1:] {
			return out[i][1:] < out[j][1:]
		}
		return out[i] < out[j]
	})
	return "\t" + strings.Join(out, "\n\t") + "\n"
}

func lineSet(b []byte) map[string]bool {
	set := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			set[l] = true
		}
	}
	return set
}
