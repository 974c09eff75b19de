// Command modcheck proves that every public module of the repository
// (package repo says which) can be fetched and built the way a user fetches
// it: from a module proxy, with no replace directive and no go.work helping.
//
// It serves the public modules at the commit under test (HEAD) from a
// file-based module proxy (zips made with golang.org/x/mod/zip), together
// with every version of a public module that one of them requires (taken
// from the git history: a tag, or the commit a pseudo-version names, which
// must be on HEAD's history; a shallow clone that lacks it fails with what to
// fetch). Then, in scratch modules outside the repository, with GOWORK=off,
// GOFLAGS=-mod=mod and the checksum database off for the repository's module
// path only, it
//
//   - for each contrib module, go gets that module alone, so that the root
//     module is the version it requires, and builds and runs a program that
//     uses it;
//   - go gets every public module at HEAD together, and builds and runs a
//     program that uses the library and each contrib module;
//   - go gets the library at HEAD in user modules (nobump.go), and fails if
//     any module they had changes its version.
//
// First, every module of the repository (the demo's and the others too) must
// agree with its go.mod as it is: a module that requires a contrib module
// must also require at least the library version that one requires, or its
// build stops with "updates to go.mod needed".
//
// A module is used by the program written for it (programs/*.go.txt, named
// after its API record); a module without one is imported for its side
// effects, so that it is at least built and initialised.
//
// Usage:
//
//	modcheck -repo DIR [-keep]   # check
//	modcheck -repo DIR -pin      # require every public module at HEAD's version, in every go.mod
//
// With -pin it checks nothing: it rewrites every requirement on a public
// module, in every module of the repository, to the pseudo-version (or tag)
// of HEAD, which must be a commit of
// main by the time the result lands (make modpin, after rebasing on main).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"

	"github.com/teebody/teebody/internal/tools/repo"
)

func main() {
	root := flag.String("repo", ".", "the repository's root directory")
	keep := flag.Bool("keep", false, "keep the proxy and the scratch modules, and print where they are")
	pinHead := flag.Bool("pin", false, "require the public modules at HEAD's version instead of checking")
	flag.Parse()
	if err := run(*root, *keep, *pinHead); err != nil {
		fmt.Fprintln(os.Stderr, "modcheck:", err)
		os.Exit(1)
	}
}

func run(root string, keep, pinHead bool) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	mods, err := repo.Public(root)
	if err != nil {
		return err
	}
	head, ok, err := lookup(root, "HEAD")
	if err != nil || !ok {
		return fmt.Errorf("no commit to test: %v", err)
	}
	all, err := repo.All(root)
	if err != nil {
		return err
	}
	if pinHead {
		return pin(root, mods, all, head)
	}
	if err := consistent(root, all); err != nil {
		return err
	}
	if out, err := git(root, "status", "--porcelain", "--untracked-files=no"); err == nil && out != "" {
		fmt.Fprintln(os.Stderr, "modcheck: the work tree has uncommitted changes; they are not checked (HEAD is)")
	}
	work, err := os.MkdirTemp("", "teebody-modcheck-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("modcheck: proxy and scratch modules in", work)
	} else {
		defer os.RemoveAll(work)
	}
	proxy := newFileProxy(filepath.Join(work, "proxy"))

	// The public modules at HEAD, then whatever versions of them they
	// require, and so on through those versions' own go.mod files.
	byPath := map[string]repo.Module{}
	for _, m := range mods {
		byPath[m.Path] = m
	}
	headVersions := map[string]string{}
	type pending struct {
		m    repo.Module
		c    commit
		from string // who required it, for errors
	}
	var queue []pending
	for _, m := range mods {
		v, err := versionAt(root, m, head)
		if err != nil {
			return err
		}
		headVersions[m.Path] = v
		if err := proxy.serve(root, module.Version{Path: m.Path, Version: v}, head.rev, m.Dir, head.time); err != nil {
			return err
		}
		queue = append(queue, pending{m, head, "HEAD"})
	}
	seen := map[string]bool{}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		key := p.m.Path + "@" + p.c.rev
		if seen[key] {
			continue
		}
		seen[key] = true
		data, err := git(root, "show", p.c.rev+":"+joinSlash(p.m.Dir, "go.mod"))
		if err != nil {
			return fmt.Errorf("%s (required by %s): %w", p.m.Path, p.from, err)
		}
		f, err := modfile.ParseLax(p.m.Dir+"/go.mod", []byte(data), nil)
		if err != nil {
			return err
		}
		for _, r := range f.Require {
			dep, public := byPath[r.Mod.Path]
			if !public {
				continue
			}
			c, err := resolve(root, dep, r.Mod.Version, head)
			if err != nil {
				return fmt.Errorf("%s at %.12s requires %s: %w", p.m.Path, p.c.rev, r.Mod.Path, err)
			}
			if err := proxy.serve(root, r.Mod, c.rev, dep.Dir, c.time); err != nil {
				return err
			}
			fmt.Printf("modcheck: %s at %.12s requires %s, served from commit %.12s\n", p.m.Path, p.c.rev, r.Mod, c.rev)
			queue = append(queue, pending{dep, c, p.m.Path})
		}
	}

	env, err := scratchEnv(proxy, mods[0].Path)
	if err != nil {
		return err
	}
	var failed []string
	for _, m := range mods[1:] {
		name := "alone-" + strings.TrimSuffix(m.APIFile(), ".txt")
		if err := check(filepath.Join(work, name), env, mods, []repo.Module{m}, headVersions); err != nil {
			failed = append(failed, fmt.Sprintf("%s alone: %v", m.Path, err))
		}
	}
	if err := check(filepath.Join(work, "all"), env, mods, mods, headVersions); err != nil {
		failed = append(failed, fmt.Sprintf("every public module at HEAD: %v", err))
	}
	for _, u := range users {
		if err := noBump(filepath.Join(work, "nobump-"+u.name), env, u, mods[0].Path, headVersions[mods[0].Path]); err != nil {
			failed = append(failed, fmt.Sprintf("adding the library bumps other modules: %v", err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("a user's go get would fail or move their modules:\n\t%s", strings.Join(failed, "\n\t"))
	}
	return nil
}
