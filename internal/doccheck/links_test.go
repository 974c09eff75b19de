package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// linked are the Markdown files whose links to the repository must hold: the
// README links the generated docs instead of quoting their figures, so a
// renamed section must not leave it pointing at nothing.
var linked = []string{"README.md", "CONTRIBUTING.md", "docs/design.md", "docs/E2E.md", "docs/demo.md", "docs/teleport.md", "cmd/demo/README.md"}

// link matches a Markdown link's target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// heading matches a Markdown heading's text.
var heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)

func TestRepositoryLinksResolve(t *testing.T) {
	for _, doc := range linked {
		if _, err := os.Stat(filepath.Join("..", "..", doc)); os.IsNotExist(err) {
			continue
		}
		text := code.ReplaceAllString(read(t, doc), " ")
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := doc
			if path != "" {
				file = filepath.ToSlash(filepath.Join(filepath.Dir(doc), path))
			}
			info, err := os.Stat(filepath.Join("..", "..", file))
			if err != nil {
				t.Errorf("%s links %q: %v", doc, target, err)
				continue
			}
			if anchor == "" {
				continue
			}
			if info.IsDir() || !strings.HasSuffix(file, ".md") {
				t.Errorf("%s links %q: an anchor into something that is not a Markdown file", doc, target)
				continue
			}
			if !anchors(read(t, file))[anchor] {
				t.Errorf("%s links %q: %s has no heading with that anchor", doc, target, file)
			}
		}
	}
}

// anchors returns the anchors GitHub gives the headings of a Markdown file:
// the text lower-cased, without the characters that are neither letters,
// digits, spaces, hyphens nor underscores, its spaces made hyphens; a
// repeated one gets -1, -2, ...
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	md = regexp.MustCompile("(?s)```.*?```").ReplaceAllString(md, "")
	for _, m := range heading.FindAllStringSubmatch(md, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func TestAnchors(t *testing.T) {
	md := "# teebody\n## nginx: a graceful GOAWAY after `keepalive_requests`\n## Go 1.27\n```\n# not a heading\n```\n### A recorded run\n## A recorded run\n## Teleport's chain\n"
	got := anchors(md)
	for _, want := range []string{"teebody", "nginx-a-graceful-goaway-after-keepalive_requests", "go-127", "a-recorded-run", "a-recorded-run-1", "teleports-chain"} {
		if !got[want] {
			t.Errorf("anchors lack %q: %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("a line in a code block became an anchor: %v", got)
	}
}
