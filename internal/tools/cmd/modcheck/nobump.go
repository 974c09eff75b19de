package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A user module, as go get of its requirements leaves it.
type userModule struct {
	name string   // a few words for messages and the scratch directory
	gets []string // path@version arguments of go get
}

// users are the modules that adding the library must leave as they are
// (issue 28). The first is on golang.org/x/net v0.57.0, with an older
// testify. The second is the reference: a module on client-go
// v0.37.2, which requires x/net v0.57.0 and x/text v0.40.0.
var users = []userModule{
	{"xnet-v0.57.0", []string{"golang.org/x/net@v0.57.0", "github.com/stretchr/testify@v1.8.4"}},
	{"client-go-v0.37.2", []string{"k8s.io/client-go@v0.37.2"}},
}

// noBump makes a scratch module in dir as go get of u.gets leaves it. Then
// it runs go get lib@version there. It fails if any module it had moved.
func noBump(dir string, env []string, u userModule, lib, version string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/user\n\ngo 1.26.0\n"), 0o644); err != nil {
		return err
	}
	if _, err := goCmd(dir, env, append([]string{"get"}, u.gets...)...); err != nil {
		return err
	}
	before, err := listModules(dir, env)
	if err != nil {
		return err
	}
	if _, err := goCmd(dir, env, "get", lib+"@"+version); err != nil {
		return err
	}
	after, err := listModules(dir, env)
	if err != nil {
		return err
	}
	if m := moved(before, after); len(m) > 0 {
		return fmt.Errorf("go get %s@%s in a module on %s moved %d of its %d modules:\n\t\t%s",
			lib, version, strings.Join(u.gets, " "), len(m), len(before), strings.Join(m, "\n\t\t"))
	}
	fmt.Printf("modcheck: no bump: go get %s@%s in a module on %s kept all %d of its modules; it added %s\n",
		lib, version, strings.Join(u.gets, " "), len(before), strings.Join(added(before, after), " "))
	return nil
}

// listModules returns the version of every module in dir's build list,
// by path. The main module has no version and is left out.
func listModules(dir string, env []string) (map[string]string, error) {
	out, err := goCmd(dir, env, "list", "-m", "-f", "{{.Path}} {{.Version}}", "all")
	if err != nil {
		return nil, err
	}
	return parseModules(out), nil
}

// parseModules reads lines of "path version", as go list -m prints them.
// It skips lines without a version.
func parseModules(out string) map[string]string {
	mods := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		path, version, _ := strings.Cut(strings.TrimSpace(line), " ")
		if path != "" && version != "" {
			mods[path] = version
		}
	}
	return mods
}

// moved lists, sorted, each module of before whose version differs in
// after or that after lacks, as "path: old -> new".
func moved(before, after map[string]string) []string {
	var out []string
	for path, v := range before {
		switch w, ok := after[path]; {
		case !ok:
			out = append(out, fmt.Sprintf("%s: %s -> gone", path, v))
		case w != v:
			out = append(out, fmt.Sprintf("%s: %s -> %s", path, v, w))
		}
	}
	sort.Strings(out)
	return out
}

// added lists, sorted, the modules of after that before lacks, as
// path@version.
func added(before, after map[string]string) []string {
	var out []string
	for path, v := range after {
		if _, ok := before[path]; !ok {
			out = append(out, path+"@"+v)
		}
	}
	sort.Strings(out)
	return out
}
