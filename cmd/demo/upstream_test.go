package main

import (
	"testing"

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/testutil"
)

func TestUpstreamServesUntilStopped(t *testing.T) {
	up := startServer(t, "upstream", "-goaway-chance", "0.02")
	target, err := kubeconfig.Load(up.kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	if target.Context != "teebody-upstream" || target.Config.BearerToken == "" || len(target.Config.CAData) == 0 {
		t.Fatalf("kubeconfig = %+v", target)
	}
	contains(t, "stderr", up.stderr.String(), "upstream listening", target.Config.Host)
	cs := testutil.Clientset(t, target.Config)
	v, err := cs.Discovery().ServerVersion()
	if err != nil || v.GitVersion != fakeapi.GitVersion {
		t.Fatalf("version = %v, %v", v, err)
	}
	if code := up.stop(); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	contains(t, "stderr", up.stderr.String(), "upstream stopped")
	if _, err := cs.Discovery().ServerVersion(); err == nil {
		t.Fatal("still serving after stop")
	}
}
