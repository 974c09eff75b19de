package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/teebody/teebody/internal/tools/repo"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// history makes a repository with a library at the root and a contrib
// module, three commits on main (the second tagged v0.1.0 for the library)
// and one on a side branch, and returns the root and the commits.
func history(t *testing.T) (root string, mods []repo.Module, main []commit, side commit) {
	t.Helper()
	root = t.TempDir()
	run := func(date string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date, "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
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
	commitAt := func(date string) commit {
		run(date, "add", "-A")
		run(date, "commit", "-q", "-m", date)
		c, ok, err := lookup(root, "HEAD")
		if err != nil || !ok {
			t.Fatal(err)
		}
		return c
	}
	run("2026-01-01T00:00:00Z", "init", "-q", "-b", "main")
	write("go.mod", "module example.com/lib\n\ngo 1.26.0\n")
	write("contrib/x/go.mod", "module example.com/lib/contrib/x\n\ngo 1.26.0\n")
	main = append(main, commitAt("2026-01-01T00:00:00Z"))
	write("a.go", "package lib\n")
	main = append(main, commitAt("2026-01-02T00:00:00Z"))
	run("2026-01-02T00:00:00Z", "tag", "v0.1.0")
	write("b.go", "package lib\n")
	main = append(main, commitAt("2026-01-03T00:00:00Z"))
	run("2026-01-04T00:00:00Z", "checkout", "-q", "-b", "side", main[0].rev)
	write("c.go", "package lib\n")
	side = commitAt("2026-01-04T00:00:00Z")
	run("2026-01-04T00:00:00Z", "checkout", "-q", "main")
	mods, err := repo.Public(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, mods, main, side
}

func TestVersionAt(t *testing.T) {
	root, mods, main, _ := history(t)
	lib, x := mods[0], mods[1]
	for _, tc := range []struct {
		m    repo.Module
		c    commit
		want string
	}{
		{lib, main[0], "v0.0.0-20260101000000-" + main[0].rev[:12]},
		{lib, main[1], "v0.1.0"},
		{lib, main[2], "v0.1.1-0.20260103000000-" + main[2].rev[:12]},
		{x, main[2], "v0.0.0-20260103000000-" + main[2].rev[:12]}, // the library's tag is not x's
	} {
		if got, err := versionAt(root, tc.m, tc.c); err != nil || got != tc.want {
			t.Errorf("versionAt(%s, %.12s) = %q, %v; want %q", tc.m.Dir, tc.c.rev, got, err, tc.want)
		}
	}
}

func TestResolve(t *testing.T) {
	root, mods, main, side := history(t)
	lib, head := mods[0], main[2]
	for _, v := range []string{"v0.0.0-20260101000000-" + main[0].rev[:12], "v0.1.0"} {
		if _, err := resolve(root, lib, v, head); err != nil {
			t.Errorf("resolve %s: %v", v, err)
		}
	}
	for v, want := range map[string]string{
		placeholder: "placeholder",
		"v0.0.0-20260101000001-" + main[0].rev[:12]: "not at the pseudo-version's time",
		"v0.0.0-20260104000000-" + side.rev[:12]:    "not an ancestor",
		"v0.0.0-20260101000000-0123456789ab":        "no commit",
		"v0.2.0":                                    "no tag",
	} {
		if _, err := resolve(root, lib, v, head); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resolve %s: %v; want an error that says %q", v, err, want)
		}
	}
}
