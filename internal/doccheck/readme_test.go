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
