// Package repo finds the public modules of the teebody repository: the
// modules that users fetch through a module proxy, as opposed to the demo,
// the end-to-end suite and the tools, which only this repository builds.
//
// The public modules are the library at the repository's root and every
// module directly under contrib/. Nothing else is public, so a new contrib
// module is covered by every check built on Public as soon as its go.mod
// exists.
package repo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

// Module is one public module.
type Module struct {
	// Path is the module path from its go.mod.
	Path string
	// Dir is the module's directory relative to the repository's root, in
	// slash form: "" for the root, "contrib/prometheus" for a contrib.
	Dir string
	// File is its parsed go.mod.
	File *modfile.File
}

// TagPrefix returns the prefix of the module's version tags: "" for the
// root module, "contrib/prometheus/" for contrib/prometheus (the go
// command's convention for a module in a subdirectory).
func (m Module) TagPrefix() string {
	if m.Dir == "" {
		return ""
	}
	return m.Dir + "/"
}

// APIFile returns the name of the module's API record under api/:
// "teebody.txt" for the root, "contrib-prometheus.txt" for
// contrib/prometheus.
func (m Module) APIFile() string {
	if m.Dir == "" {
		return "teebody.txt"
	}
	name := []byte(m.Dir)
	for i, c := range name {
		if c == '/' {
			name[i] = '-'
		}
	}
	return string(name) + ".txt"
}

// Public returns the public modules of the repository at root, the root
// module first, then the contrib modules by directory name.
func Public(root string) ([]Module, error) {
	dirs := []string{""}
	matches, err := filepath.Glob(filepath.Join(root, "contrib", "*", "go.mod"))
	if err != nil {
		return nil, err
	}
	sort.Strings(matches)
	for _, gomod := range matches {
		rel, err := filepath.Rel(root, filepath.Dir(gomod))
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, filepath.ToSlash(rel))
	}
	var mods []Module
	for _, dir := range dirs {
		m, err := load(root, dir)
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	return mods, nil
}

// All returns every module of the repository whose go.mod git tracks, the
// public ones and the others (the demo, the end-to-end suite, the tools), by
// directory.
func All(root string) ([]Module, error) {
	cmd := exec.Command("git", "-C", root, "ls-files", "--", "go.mod", "*/go.mod")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var mods []Module
	for _, gomod := range strings.Fields(string(out)) {
		dir := strings.TrimSuffix(strings.TrimSuffix(gomod, "go.mod"), "/")
		m, err := load(root, dir)
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	return mods, nil
}

func load(root, dir string) (Module, error) {
	gomod := filepath.Join(root, filepath.FromSlash(dir), "go.mod")
	data, err := os.ReadFile(gomod)
	if err != nil {
		return Module{}, err
	}
	f, err := modfile.ParseLax(gomod, data, nil)
	if err != nil {
		return Module{}, err
	}
	if f.Module == nil {
		return Module{}, fmt.Errorf("%s: no module line", gomod)
	}
	return Module{Path: f.Module.Mod.Path, Dir: dir, File: f}, nil
}
