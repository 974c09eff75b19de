// Package testutil holds the helpers that the demo's tests share across
// packages. Only tests import it; nothing in the command depends on it.
//
// Every helper fails the test through t on error, and registers with
// t.Cleanup whatever it started, so that goleak finds nothing left behind
// when the package's tests end.
package testutil

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
)

// Clientset returns a client-go clientset for cfg, with connections of its
// own (kubeconfig.Isolated) that close when the test ends.
func Clientset(t testing.TB, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cfg = kubeconfig.Isolated(cfg)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hc.CloseIdleConnections)
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// Target writes spec to a kubeconfig file in the test's temporary directory
// and loads it back with its current context, as a client of the demo would.
func Target(t testing.TB, spec kubeconfig.Spec) kubeconfig.Target {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubeconfig.Write(path, spec); err != nil {
		t.Fatal(err)
	}
	target, err := kubeconfig.Load(path, "")
	if err != nil {
		t.Fatal(err)
	}
	return target
}

// StartUpstream serves the demo's upstream (the fake API server) with opts,
// as "demo upstream" does, and shuts it down when the test ends. Cleanups
// run last-registered first, so whatever the test starts in front of it
// afterwards stops before it.
func StartUpstream(t testing.TB, opts fakeapi.Options) serve.Running {
	t.Helper()
	u, err := fakeapi.Start(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := u.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return u
}

// HTTPSClient returns an HTTP client that trusts only the CA in caPEM and
// attempts HTTP/2, as the demo's servers serve it. Its idle connections
// close when the test ends. It fails the test if caPEM holds no certificate.
func HTTPSClient(t testing.TB, caPEM []byte) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("testutil: no CA certificate in the PEM data")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// CheckHTTP2Status sends req with hc and closes the response body. It stops
// the test if the request fails, and reports an error, labelled what, unless
// the response came over HTTP/2 with status want.
func CheckHTTP2Status(t testing.TB, hc *http.Client, req *http.Request, want int, what string) {
	t.Helper()
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != want || resp.ProtoMajor != 2 {
		t.Errorf("%s: %s %d, want HTTP/2 %d", what, resp.Proto, resp.StatusCode, want)
	}
}
