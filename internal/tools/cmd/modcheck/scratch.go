package main

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/teebody/teebody/internal/tools/repo"
)

// programs holds, for a public module, the part of the scratch program that
// uses it: programs/NAME.go.txt for the module whose API record is
// api/NAME.txt. Each file is a Go file of package main whose init adds a
// check (see mainFile).
//
//go:embed programs/*.go.txt
var programs embed.FS

// mainFile is the scratch program's main: it runs every check that the
// programs added, and fails with the first error.
const mainFile = `// Code written by modcheck: a user's program, built against the modules as a proxy serves them.
package main

import (
	"fmt"
	"os"
%s)

type check struct {
	name string
	run  func() error
}

var checks []check

func main() {
	for _, c := range checks {
		if err := c.run(); err != nil {
			fmt.Fprintf(os.Stderr, "%%s: %%v\n", c.name, err)
			os.Exit(1)
		}
		fmt.Println("ok:", c.name)
	}
}
`

// scratchEnv returns the environment of the go commands run in scratch
// modules: a user's, whose only source of the repository's modules is the
// file proxy, with no go.work, and the checksum database asked about every
// module but the repository's own (it has never seen these versions).
func scratchEnv(proxy *fileProxy, rootPath string) ([]string, error) {
	out, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOPROXY: %w", err)
	}
	goproxy := proxy.URL()
	if upstream := strings.TrimSpace(string(out)); upstream != "" && upstream != "off" {
		goproxy += "," + upstream // the modules of others, as before
	}
	drop := map[string]bool{"GOWORK": true, "GOFLAGS": true, "GOPROXY": true, "GONOSUMDB": true, "GONOSUMCHECK": true,
		"GOPRIVATE": true, "GONOPROXY": true, "GOINSECURE": true}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env, "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY="+goproxy, "GONOSUMDB="+rootPath,
		"GOPRIVATE=", "GONOPROXY="), nil
}

// check makes a scratch module in dir, go gets the selected modules at
// their HEAD versions (and nothing else of the repository), and builds and
// runs a program that uses each of them.
func check(dir string, env []string, all, selected []repo.Module, headVersions map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	goVersion := "1.26.0"
	if f := all[0].File; f.Go != nil {
		goVersion = f.Go.Version
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/modcheck\n\ngo "+goVersion+"\n"), 0o644); err != nil {
		return err
	}
	args := []string{"get"}
	for _, m := range selected {
		args = append(args, m.Path+"@"+headVersions[m.Path])
	}
	if _, err := goCmd(dir, env, args...); err != nil {
		return err
	}
	var imports []string
	for _, m := range selected {
		src, err := programs.ReadFile("programs/" + strings.TrimSuffix(m.APIFile(), ".txt") + ".go.txt")
		if err == nil {
			if err := os.WriteFile(filepath.Join(dir, "use_"+strings.TrimSuffix(m.APIFile(), ".txt")+".go"), src, 0o644); err != nil {
				return err
			}
		} else {
			fmt.Printf("modcheck: no program uses %s (add programs/%s.go.txt): only built and initialised\n",
				m.Path, strings.TrimSuffix(m.APIFile(), ".txt"))
		}
		// Every public package, so that each one builds as fetched.
		out, err := goCmd(dir, env, "list", "-f", "{{.ImportPath}} {{.Name}}", m.Path+"/...")
		if err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			path, name, _ := strings.Cut(line, " ")
			if name != "main" && !isInternal(path) && !nested(path, m, all) {
				imports = append(imports, path)
			}
		}
	}
	sort.Strings(imports)
	var imp strings.Builder
	for _, p := range imports {
		fmt.Fprintf(&imp, "\t_ %q\n", p)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), fmt.Appendf(nil, mainFile, imp.String()), 0o644); err != nil {
		return err
	}
	if _, err := goCmd(dir, env, "mod", "tidy"); err != nil {
		return err
	}
	out, err := goCmd(dir, env, "run", ".")
	if err != nil {
		return err
	}
	versions, err := goCmd(dir, env, "list", "-m", "-f", "{{.Path}}@{{.Version}}", all[0].Path)
	if err != nil {
		return err
	}
	var names []string
	for _, m := range selected {
		names = append(names, m.Path)
	}
	fmt.Printf("modcheck: go get %s: built and ran against %s\n%s", strings.Join(names, " "), strings.TrimSpace(versions), indent(out))
	return nil
}

// nested reports whether path belongs to a public module other than m that
// lies inside m's directory (the root's pattern matches no packages of
// modules nested in it, but say so rather than rely on it).
func nested(path string, m repo.Module, all []repo.Module) bool {
	for _, o := range all {
		if o.Path != m.Path && strings.HasPrefix(o.Path, m.Path+"/") && (path == o.Path || strings.HasPrefix(path, o.Path+"/")) {
			return true
		}
	}
	return false
}

func isInternal(path string) bool {
	for _, elem := range strings.Split(path, "/") {
		if elem == "internal" {
			return true
		}
	}
	return false
}

func goCmd(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s (in %s): %w\n%s%s", strings.Join(args, " "), dir, err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "\t" + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n\t") + "\n"
}
