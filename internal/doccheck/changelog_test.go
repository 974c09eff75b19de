package doccheck

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// release matches a CHANGELOG heading of a released version: "## [0.1.0] - 2026-12-02".
var release = regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\]`)

// TestChangelogReleasesAreTagged fails on a CHANGELOG heading that claims a
// release of the library whose tag v<version> is not in the repository.
func TestChangelogReleasesAreTagged(t *testing.T) {
	versions := releases(read(t, "CHANGELOG.md"))
	if len(versions) == 0 {
		return
	}
	out, err := exec.Command("git", "-C", "../..", "tag", "--list", "v*").Output()
	if err != nil {
		t.Skipf("no git repository to read tags from: %v", err)
	}
	tags := map[string]bool{}
	for _, tag := range strings.Fields(string(out)) {
		tags[tag] = true
	}
	for _, v := range versions {
		if !tags["v"+v] {
			t.Errorf("CHANGELOG.md has a heading for %s, but the repository has no tag v%s: keep its lines under Unreleased until the tag exists", v, v)
		}
	}
}

func TestReleasesFindsHeadings(t *testing.T) {
	got := releases("# Changelog\n\n## [Unreleased]\n\n- a line\n\n## [0.2.0] - 2027-01-02\n\n## [0.1.0] - 2026-12-02\n")
	if strings.Join(got, " ") != "0.2.0 0.1.0" {
		t.Errorf("releases = %q, want [0.2.0 0.1.0]", got)
	}
}

// releases returns the versions of the release headings of a CHANGELOG.
func releases(changelog string) []string {
	var vs []string
	for _, m := range release.FindAllStringSubmatch(changelog, -1) {
		vs = append(vs, m[1])
	}
	return vs
}
