package doccheck

import (
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoFile matches a path of this repository in a doc comment: pkg.go.dev
// shows godoc, not the repository, so an exported doc comment must state
// its contract whole instead of sending the reader to a file.
var repoFile = regexp.MustCompile(`\b[\w./-]+\.md\b|\bdocs/|\bREADME\b`)

// publicPackages are the packages users import, in every public module.
var publicPackages = []string{"pkg/refcount", "pkg/teebody", "pkg/transport", "pkg/goawaytest", "contrib/prometheus", "contrib/caddy", "contrib/otel"}

func TestGodocNamesNoRepositoryFile(t *testing.T) {
	for _, dir := range publicPackages {
		path := filepath.Join("..", "..", dir)
		if _, err := os.Stat(path); os.IsNotExist(err) {
			continue
		}
		for where, text := range exportedDocs(t, path) {
			if m := repoFile.FindString(text); m != "" {
				t.Errorf("%s: %s's doc comment sends the reader to %q: state the contract there, or name the Go identifier that states it", dir, where, m)
			}
		}
	}
}

// exportedDocs returns the text of every doc comment that go doc -all shows
// for the package in dir: the package's, and those of its exported
// constants, variables, types (with their exported fields and methods) and
// functions, keyed by what they document.
func exportedDocs(t *testing.T, dir string) map[string]string {
	t.Helper()
	bp, err := build.ImportDir(dir, 0) // the files this build sees, by their build constraints
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	d, err := doc.NewFromFiles(fset, files, "example.com/"+dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{"package " + d.Name: d.Doc}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			out[strings.Join(v.Names, ", ")] = v.Doc + declComments(v.Decl)
		}
	}
	funcs := func(prefix string, fs []*doc.Func) {
		for _, f := range fs {
			out[prefix+f.Name] = f.Doc
		}
	}
	values(d.Consts)
	values(d.Vars)
	funcs("", d.Funcs)
	for _, ty := range d.Types {
		out[ty.Name] = ty.Doc + declComments(ty.Decl)
		values(ty.Consts)
		values(ty.Vars)
		funcs("", ty.Funcs)
		funcs(ty.Name+".", ty.Methods)
	}
	return out
}

// declComments returns the comments inside decl that go doc shows: those of
// its specs and of exported struct fields and interface methods.
func declComments(decl *ast.GenDecl) string {
	var b strings.Builder
	add := func(cgs ...*ast.CommentGroup) {
		for _, cg := range cgs {
			if cg != nil {
				b.WriteString(cg.Text())
			}
		}
	}
	ast.Inspect(decl, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			exported := len(n.Names) == 0 // an embedded field shows
			for _, name := range n.Names {
				exported = exported || name.IsExported()
			}
			if exported {
				add(n.Doc, n.Comment)
			}
			return exported
		case *ast.ValueSpec:
			add(n.Doc, n.Comment)
		case *ast.TypeSpec:
			add(n.Doc, n.Comment)
		}
		return true
	})
	return b.String()
}

func TestExportedDocsSeesEveryPlace(t *testing.T) {
	dir := t.TempDir()
	src := `// Package p: see a.md.
package p

// C is docs/c.
const C = 1

// T is t.
type T struct {
	// F is README.
	F int
	// g is not shown, so docs/g.md is allowed.
	g int
}

// M is x.md.
func (T) M() {}

// F is y.md.
func F() {}

// f is not shown: z.md.
func f() {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var found []string
	for where, text := range exportedDocs(t, dir) {
		if repoFile.MatchString(text) {
			found = append(found, where)
		}
	}
	want := map[string]bool{"package p": true, "C": true, "T": true, "T.M": true, "F": true}
	if len(found) != len(want) {
		t.Fatalf("found repository files in %q, want in %v", found, want)
	}
	for _, w := range found {
		if !want[w] {
			t.Errorf("found a repository file in %s, which should be clean", w)
		}
	}
}
