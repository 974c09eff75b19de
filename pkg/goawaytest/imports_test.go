package goawaytest_test

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// The library's other packages import only the standard library, and one
// another: goawaytest's x/net stays out of every program that uses them.
func TestLibraryImportsStandardLibrary(t *testing.T) {
	const module = "github.com/teebody/teebody/"
	library := []string{"pkg/refcount", "pkg/teebody", "pkg/transport"}
	for _, dir := range library {
		p, err := build.ImportDir(filepath.Join("..", "..", dir), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range p.Imports {
			first, _, _ := strings.Cut(imp, "/")
			if strings.Contains(first, ".") && !isLibrary(imp, module, library) {
				t.Errorf("%s imports %s", dir, imp)
			}
		}
	}
}

func isLibrary(imp, module string, library []string) bool {
	for _, dir := range library {
		if imp == module+dir {
			return true
		}
	}
	return false
}
