package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// fileProxy is a module proxy in a directory, in the layout the go command
// reads with GOPROXY=file://dir: path/@v/list, and version.info, .mod and
// .zip for each version.
type fileProxy struct {
	dir    string
	served map[module.Version]bool
}

func newFileProxy(dir string) *fileProxy {
	return &fileProxy{dir: dir, served: map[module.Version]bool{}}
}

// URL returns the GOPROXY entry of the proxy.
func (p *fileProxy) URL() string { return "file://" + filepath.ToSlash(p.dir) }

// serve adds mod@version, made from commit rev of the git repository at
// root, where the module is in subdir ("" for the root), with the go.mod
// that commit has.
func (p *fileProxy) serve(root string, mod module.Version, rev, subdir string, at time.Time) error {
	if p.served[mod] {
		return nil
	}
	epath, err := module.EscapePath(mod.Path)
	if err != nil {
		return err
	}
	evers, err := module.EscapeVersion(mod.Version)
	if err != nil {
		return err
	}
	dir := filepath.Join(p.dir, filepath.FromSlash(epath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	gomod, err := git(root, "show", rev+":"+joinSlash(subdir, "go.mod"))
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{mod.Version, at.UTC()})
	if err != nil {
		return err
	}
	// CreateFromVCS wants the directory whose .git is the repository (not a
	// linked worktree's); git archive reads any commit from there.
	common, err := git(root, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return err
	}
	common = strings.TrimSpace(common)
	if filepath.Base(common) != ".git" {
		return fmt.Errorf("%s: the repository's git directory %s is not a .git directory of a work tree", root, common)
	}
	var zipped bytes.Buffer
	// CreateFromVCS leaves out what a module zip leaves out: nested
	// modules, vendor directories, files a module zip may not hold.
	if err := zip.CreateFromVCS(&zipped, mod, filepath.Dir(common), rev, subdir); err != nil {
		return fmt.Errorf("zipping %s at %s: %w", mod, rev, err)
	}
	for ext, data := range map[string][]byte{".info": info, ".mod": []byte(gomod), ".zip": zipped.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, evers+ext), data, 0o644); err != nil {
			return err
		}
	}
	p.served[mod] = true
	var versions []string
	for m := range p.served {
		if m.Path == mod.Path {
			versions = append(versions, m.Version)
		}
	}
	sort.Strings(versions)
	return os.WriteFile(filepath.Join(dir, "list"), []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}

func joinSlash(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
