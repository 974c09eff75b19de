package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeFirstScreen keeps what an adopter needs before the README's
// first section: the error it fixes, how to get it, the ReverseProxy
// snippet, the two commands that show and test it, and the licence.
func TestReadmeFirstScreen(t *testing.T) {
	s := read(t, readme)
	end := strings.Index(s, "\n## ")
	if end < 0 {
		t.Fatal("README.md has no section")
	}
	first := s[:end]
	for _, want := range []string{
		"define Request.GetBody to avoid this error",
		"go get github.com/teebody/teebody",
		"transport.New(",
		"ErrorHandler: tr.ErrorHandler",
		"make demo ",
		"make test ",
		"(LICENSE)",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("README.md's first screen (before its first section) lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join("..", "..", "LICENSE")); err != nil {
		t.Errorf("the README links the licence: %v", err)
	}
}

// screenLines is a first screen: what a terminal or a repository page shows
// before the reader scrolls.
const screenLines = 40

// maxReadmeLines keeps the README a front door; contributor matter lives in
// CONTRIBUTING.md and the design in docs/design.md.
const maxReadmeLines = 120

// TestReadmeCommandsOnFirstScreen keeps make demo and make test within the
// README's first screen, and the README short.
func TestReadmeCommandsOnFirstScreen(t *testing.T) {
	lines := strings.Split(strings.TrimRight(read(t, readme), "\n"), "\n")
	if len(lines) > maxReadmeLines {
		t.Errorf("README.md has %d lines, want at most %d", len(lines), maxReadmeLines)
	}
	for _, cmd := range []string{"make demo", "make test"} {
		at := -1
		for i, l := range lines {
			if strings.HasPrefix(l, cmd+" ") {
				at = i + 1
				break
			}
		}
		switch {
		case at < 0:
			t.Errorf("README.md has no line that starts with %q", cmd)
		case at > screenLines:
			t.Errorf("README.md gives %q on line %d, want it within the first %d lines", cmd, at, screenLines)
		}
	}
}
