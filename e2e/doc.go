// Package e2e runs the original GOAWAY experiment against a real kube-apiserver and etcd, built from the versions
// pinned in this module's go.mod (see build.sh), and a second one against a real nginx (found on the machine),
// behind a Go proxy and behind a real Caddy built with contrib/caddy (see build-caddy.sh), and a third against Go
// upstreams restarted in turn with http.Server.Shutdown, on loopback only. A fourth runs writes through
// kube-apiserver's aggregator to k8s.io/sample-apiserver with --goaway-chance, once through the stock
// kube-apiserver and once through one built with aggregator/kube-aggregator.patch.
//
// The suite lives in this package's tests. It runs only when TEEBODY_E2E=1 is set (make e2e does that after
// build.sh); a plain go test skips it and says so. It needs a Unix system, as it stops its servers by process group.
// What it asserts, and recorded runs, are in docs/E2E.md.
package e2e
