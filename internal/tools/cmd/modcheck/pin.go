package main

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/modfile"

	"github.com/teebody/teebody/internal/tools/repo"
)

// pin sets every requirement on a public module, in every module of the
// repository (all), to that module's version at head, and writes the go.mod
// files it changed: the demo's too, whose requirement of the library must
// not fall below what the contrib modules it requires need.
// Commit the result: the pins then name the commit before it, which is on
// main once both have landed, so a user resolves them.
func pin(root string, mods, all []repo.Module, head commit) error {
	versions := map[string]string{}
	for _, m := range mods {
		v, err := versionAt(root, m, head)
		if err != nil {
			return err
		}
		versions[m.Path] = v
	}
	for _, m := range all {
		file := filepath.Join(root, filepath.FromSlash(m.Dir), "go.mod")
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		f, err := modfile.Parse(file, data, nil)
		if err != nil {
			return err
		}
		changed := false
		for _, r := range f.Require {
			if v, public := versions[r.Mod.Path]; public && r.Mod.Version != v {
				if err := f.AddRequire(r.Mod.Path, v); err != nil {
					return err
				}
				fmt.Printf("modcheck: %s now requires %s@%s\n", m.Path, r.Mod.Path, v)
				changed = true
			}
		}
		if !changed {
			continue
		}
		out, err := f.Format()
		if err != nil {
			return err
		}
		if err := os.WriteFile(file, out, 0o644); err != nil {
			return err
		}
	}
	return nil
}
