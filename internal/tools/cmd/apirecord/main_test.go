package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestCheck writes the record of a small repository, checks it, then changes
// the API and checks that the check fails and says how to update.
func TestCheck(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/lib\n\ngo 1.26.0\n")
	write("p/p.go", "package p\n\nfunc Old() {}\n")
	write("internal/q/q.go", "package q\n\nfunc Hidden() {}\n")
	write("cmd/c/main.go", "package main\n\nfunc Exported() {}\n\nfunc main() {}\n")
	write("contrib/x/go.mod", "module example.com/lib/contrib/x\n\ngo 1.26.0\n")
	write("contrib/x/x.go", "package x\n\nconst Size = 1\n")
	if err := run(root, true); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"teebody.txt":   "pkg example.com/lib/p, func Old()\n",
		"contrib-x.txt": "pkg example.com/lib/contrib/x, const Size untyped int = 1\n",
	} {
		got, err := os.ReadFile(filepath.Join(root, "api", file))
		if err != nil || string(got) != want {
			t.Errorf("api/%s = %q, %v; want %q", file, got, err, want)
		}
	}
	if err := run(root, false); err != nil {
		t.Fatalf("check right after writing: %v", err)
	}
	write("p/p.go", "package p\n\nfunc New() {}\n")
	err := run(root, false)
	if err == nil || !strings.Contains(err.Error(), "make api") || !strings.Contains(err.Error(), "CHANGELOG.md") ||
		!strings.Contains(err.Error(), "example.com/lib") || strings.Contains(err.Error(), "contrib/x") {
		t.Errorf("check after an API change: %v; want an error naming example.com/lib alone, make api and CHANGELOG.md", err)
	}
}
