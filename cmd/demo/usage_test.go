package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBadUsage: every wrong command line exits 2 with a message that says
// what is wrong, before anything runs.
func TestBadUsage(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "k")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{""}, `unknown command ""`},
		{[]string{"-workers", "x"}, `invalid value "x" for flag -workers`},
		{[]string{"-workers", "0"}, "demo: load: options: workers must be at least 1"},
		{[]string{"-goaway-chance", "1.5"}, "must be between 0 and 1"},
		{[]string{"-small-budget", "0"}, "-small-budget must be positive"},
		{[]string{"-body-size", "2MiB"}, "body size must be between 0 and 1048569 bytes, not 2097152"},
		{[]string{"-burst", "-1"}, "burst must not be negative"},
		{[]string{"stray"}, `unknown command "stray"`},
		{[]string{"load", "-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"load", "-ops", "0"}, "ops per worker must be at least 1"},
		{[]string{"load", "-qps", "0"}, "-qps must not be 0"},
		{[]string{"load", "-body-size", "lots"}, `invalid value "lots" for flag -body-size`},
		{[]string{"load", "extra"}, `unexpected argument "extra"`},
		{[]string{"load", "-kubeconfig", filepath.Join(dir, "missing")}, "demo load: kubeconfig"},
		{[]string{"proxy", "-kubeconfig", kc}, "-write-kubeconfig is required"},
		{[]string{"proxy", "-write-kubeconfig", kc, "-total-bytes", "1QB"}, `invalid value "1QB" for flag -total-bytes`},
		{[]string{"proxy", "-write-kubeconfig", kc, "-tls-cert", "c.pem"}, "-tls-cert and -tls-key go together"},
		{[]string{"proxy", "-write-kubeconfig", kc, "-retry-after", "0s"}, "-retry-after must be positive"},
		{[]string{"proxy", "-write-kubeconfig", kc, "-kubeconfig", filepath.Join(dir, "missing")}, "demo proxy: kubeconfig"},
		{[]string{"upstream"}, "-write-kubeconfig is required"},
		{[]string{"upstream", "-goaway-chance", "NaN", "-write-kubeconfig", kc}, "must be between 0 and 1"},
		{[]string{"upstream", "-goaway-after", "-1", "-write-kubeconfig", kc}, "-goaway-after must not be negative"},
		{[]string{"-goaway-after", "x"}, `invalid value "x" for flag -goaway-after`},
		{[]string{"compare"}, "-files names no file"},
		{[]string{"compare", "-files", filepath.Join(dir, "missing.json")}, "load: result file"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCmd(t, tc.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want 2; stdout %q; stderr %q", code, stdout, stderr)
			}
			contains(t, "stderr", stderr, tc.want)
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"load", "-h"}, {"proxy", "-h"}, {"upstream", "-h"}, {"compare", "-h"}} {
		code, stdout, stderr := runCmd(t, args...)
		if code != exitOK || !strings.Contains(stdout+stderr, "usage") {
			t.Errorf("%v: exit %d, output %q", args, code, stdout+stderr)
		}
	}
}
