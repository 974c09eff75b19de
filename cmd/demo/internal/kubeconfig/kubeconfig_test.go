package kubeconfig_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestWriteLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	spec := kubeconfig.Spec{Name: "n", Server: "https://127.0.0.1:1234", CAData: []byte("ca"), Token: "tok", Namespace: "ns"}
	if err := kubeconfig.Write(path, spec); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600: the file holds a token", fi.Mode(), err)
	}
	got, err := kubeconfig.Load(path, "")
	if err != nil {
		t.Fatal(err)
	}
	c := got.Config
	if c.Host != spec.Server || c.BearerToken != "tok" || string(c.CAData) != "ca" || got.Context != "n" || got.Namespace != "ns" {
		t.Fatalf("loaded %+v, %+v", got, c)
	}
	if _, err := kubeconfig.Load(path, "other"); !errors.Is(err, kubeconfig.ErrKubeconfig) {
		t.Fatalf("missing context: err = %v, want ErrKubeconfig", err)
	}
	// Rewriting replaces the file whole, and leaves no temporary file.
	spec.Token = "new"
	if err := kubeconfig.Write(path, spec); err != nil {
		t.Fatal(err)
	}
	if got, _ := kubeconfig.Load(path, "n"); got.Config.BearerToken != "new" {
		t.Fatalf("token %q after rewrite", got.Config.BearerToken)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("%d files, want 1", len(entries))
	}
}

func TestWriteFails(t *testing.T) {
	err := kubeconfig.Write(filepath.Join(t.TempDir(), "missing", "kubeconfig"), kubeconfig.Spec{Name: "n"})
	if !errors.Is(err, kubeconfig.ErrKubeconfig) {
		t.Fatalf("err = %v, want ErrKubeconfig", err)
	}
}
