package main

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	"github.com/teebody/teebody/internal/tools/repo"
)

// placeholder is the version `go mod edit -require` and `go mod tidy` write
// for a module that a replace directive stands in for: it exists nowhere, so
// a user, whose build ignores the replace, cannot resolve it.
const placeholder = "v0.0.0-00010101000000-000000000000"

// commit is one commit of the repository.
type commit struct {
	rev  string // the full hash
	time time.Time
}

func git(root string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// lookup returns the commit that rev names, if the repository has it.
func lookup(root, rev string) (commit, bool, error) {
	out, err := git(root, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		if strings.Contains(err.Error(), "exit status 1") {
			return commit{}, false, nil
		}
		return commit{}, false, err
	}
	full := strings.TrimSpace(out)
	out, err = git(root, "show", "-s", "--format=%ct", full)
	if err != nil {
		return commit{}, false, err
	}
	secs, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		return commit{}, false, err
	}
	return commit{rev: full, time: time.Unix(secs, 0).UTC()}, true, nil
}

// versionAt returns the version under which the module m is served at c:
// its tag if c carries one, else the pseudo-version the go command gives
// that commit (built on the latest tag of m that c descends from).
func versionAt(root string, m repo.Module, c commit) (string, error) {
	out, err := git(root, "tag", "--merged", c.rev, "--list", m.TagPrefix()+"v*")
	if err != nil {
		return "", err
	}
	base := ""
	for _, tag := range strings.Fields(out) {
		v := strings.TrimPrefix(tag, m.TagPrefix())
		if !semver.IsValid(v) || semver.Build(v) != "" || semver.Major(v) != "v0" && semver.Major(v) != "v1" {
			continue
		}
		if tagged, ok, err := lookup(root, "refs/tags/"+tag); err != nil {
			return "", err
		} else if ok && tagged.rev == c.rev {
			return v, nil
		}
		if base == "" || semver.Compare(v, base) > 0 {
			base = v
		}
	}
	return module.PseudoVersion("v0", base, c.time, c.rev[:12]), nil
}

// resolve finds the commit of the repository that version v of the module m
// is made from: a tag's, or a pseudo-version's, which must then be the
// commit whose hash and time the pseudo-version names and lie on the history
// of head (a commit on main, as users fetch it).
func resolve(root string, m repo.Module, v string, head commit) (commit, error) {
	if v == placeholder {
		return commit{}, fmt.Errorf("%s is required at the placeholder %s, which no proxy serves; require a commit of main (its pseudo-version) or a tag", m.Path, v)
	}
	if !module.IsPseudoVersion(v) {
		c, ok, err := lookup(root, "refs/tags/"+m.TagPrefix()+v)
		if err != nil {
			return commit{}, err
		}
		if !ok {
			return commit{}, fmt.Errorf("%s@%s: no tag %s%s in this repository", m.Path, v, m.TagPrefix(), v)
		}
		return c, nil
	}
	short, err := module.PseudoVersionRev(v)
	if err != nil {
		return commit{}, err
	}
	c, ok, err := lookup(root, short)
	if err != nil {
		return commit{}, err
	}
	if !ok {
		if out, err := git(root, "rev-parse", "--is-shallow-repository"); err == nil && strings.TrimSpace(out) == "true" {
			return commit{}, fmt.Errorf("%s@%s: commit %s is not in this shallow clone; fetch the history (git fetch --unshallow) and run again", m.Path, v, short)
		}
		return commit{}, fmt.Errorf("%s@%s: no commit %s in this repository", m.Path, v, short)
	}
	if want, err := module.PseudoVersionTime(v); err != nil {
		return commit{}, err
	} else if !want.Equal(c.time) {
		return commit{}, fmt.Errorf("%s@%s: commit %s was made at %s, not at the pseudo-version's time; a proxy would refuse it",
			m.Path, v, short, c.time.Format("20060102150405"))
	}
	if _, err := git(root, "merge-base", "--is-ancestor", c.rev, head.rev); err != nil {
		return commit{}, fmt.Errorf("%s@%s: commit %s is not an ancestor of the commit under test", m.Path, v, short)
	}
	return c, nil
}
