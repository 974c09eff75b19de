// Command apirecord writes or checks the record of the exported API of each
// public module of the repository (package repo says which they are): one
// file per module under api/ at the repository's root, written by package
// api, one sorted line per exported identifier.
//
// Usage:
//
//	apirecord -repo DIR       # check: exit 1, with the difference, if a record is stale
//	apirecord -repo DIR -w    # write the records
//
// The packages recorded are those of the module that are neither internal
// nor commands (package main); test files are left out.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/teebody/teebody/internal/tools/api"
	"github.com/teebody/teebody/internal/tools/repo"
)

func main() {
	root := flag.String("repo", ".", "the repository's root directory")
	write := flag.Bool("w", false, "write the records instead of checking them")
	flag.Parse()
	if err := run(*root, *write); err != nil {
		fmt.Fprintln(os.Stderr, "apirecord:", err)
		os.Exit(1)
	}
}

func run(root string, write bool) error {
	mods, err := repo.Public(root)
	if err != nil {
		return err
	}
	dir := filepath.Join(root, "api")
	want := map[string]bool{}
	var stale []string
	for _, m := range mods {
		want[m.APIFile()] = true
		record, err := moduleRecord(root, m)
		if err != nil {
			return fmt.Errorf("%s: %w", m.Path, err)
		}
		file := filepath.Join(dir, m.APIFile())
		if write {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(file, record, 0o644); err != nil {
				return err
			}
			continue
		}
		old, err := os.ReadFile(file)
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		if !bytes.Equal(old, record) {
			stale = append(stale, m.Path)
			fmt.Fprintf(os.Stderr, "api/%s: the exported API of %s differs from its record:\n%s", m.APIFile(), m.Path, diff(old, record))
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".txt") && !want[e.Name()] {
			if write {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					return err
				}
				continue
			}
			stale = append(stale, "api/"+e.Name())
			fmt.Fprintf(os.Stderr, "api/%s: the record of a module that is not public (any more)\n", e.Name())
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("the API record is stale for %s.\n"+
			"If the change is on purpose, run `make api` to rewrite api/*.txt, commit the result, and add a line\n"+
			"to CHANGELOG.md's Unreleased section that says what changed (a removed or changed identifier breaks users)",
			strings.Join(stale, ", "))
	}
	return nil
}

// moduleRecord returns the API record of the public packages of m.
func moduleRecord(root string, m repo.Module) ([]byte, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes,
		Dir:  filepath.Join(root, filepath.FromSlash(m.Dir)),
		// The module as its own go.mod builds it, whatever go.work the
		// caller's directory tree has.
		Env: append(os.Environ(), "GOWORK=off"),
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	var errs []string
	for _, p := range pkgs {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("loading packages:\n\t%s", strings.Join(errs, "\n\t"))
	}
	var lines []string
	for _, p := range pkgs {
		if p.Name == "main" || isInternal(p.PkgPath) {
			continue
		}
		lines = append(lines, api.Lines(p.Types)...)
	}
	sort.Strings(lines)
	for _, l := range lines {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

func isInternal(path string) bool {
	for _, elem := range strings.Split(path, "/") {
		if elem == "internal" {
			return true
		}
	}
	return false
}
