package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/teebody/teebody/internal/tools/repo"
)

// consistent checks that every module of the repository resolves its module
// graph from its go.mod as it stands (-mod=readonly, no go.work), as its
// tests and builds will.
func consistent(root string, all []repo.Module) error {
	var failed []string
	for _, m := range all {
		cmd := exec.Command("go", "list", "-m", "all")
		cmd.Dir = filepath.Join(root, filepath.FromSlash(m.Dir))
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
		if out, err := cmd.CombinedOutput(); err != nil {
			failed = append(failed, fmt.Sprintf("%s: go list -m all: %v\n\t%s", m.Path, err,
				strings.ReplaceAll(strings.TrimSpace(lastLines(string(out), 5)), "\n", "\n\t")))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("modules whose go.mod does not hold their requirements (make modpin, or go mod tidy there):\n%s",
			strings.Join(failed, "\n"))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
