#!/usr/bin/env bash
# Builds the servers the end-to-end suite runs, from the versions pinned in this module's go.mod, into bin/
# (ignored by git): kube-apiserver, etcd and wardle (aggregator/wardle: k8s.io/sample-apiserver's server, with
# --goaway-chance); then
# kube-apiserver-patched, the same kube-apiserver built with aggregator/kube-aggregator.patch applied to a copy of
# k8s.io/kube-aggregator from the module cache (aggregator/patched.sh makes its build module).
#
# A stamp holding the hash of the module graph (go list -m all: every module's version, replacements included), this
# script and the Go version skips those three when none of them changed; a cold build takes about 5 minutes on
# 2 cores. A second stamp, bin/.stamp-patched, holds that hash and the hash of the patch, of aggregator/patched.sh
# and of the library's sources, and skips the patched build alone. With the first build's packages cached, it
# compiles what imports kube-aggregator, and links.
#
# Usage: ./build.sh [-f]   (-f rebuilds even when the stamps match)
set -euo pipefail
cd "$(dirname "$0")"

GO=${GO:-go}
here=$PWD
bin=bin
stamp=$bin/.stamp
stampPatched=$bin/.stamp-patched

want=$( { "$GO" list -m all; cat "$0"; "$GO" version; } | sha256sum | cut -d' ' -f1)
wantPatched=$( {
	echo "$want"
	cat aggregator/kube-aggregator.patch aggregator/patched.sh
	find ../pkg -type f -name '*.go' -not -name '*_test.go' | LC_ALL=C sort | xargs sha256sum
	sha256sum ../go.mod ../go.sum
} | sha256sum | cut -d' ' -f1)

kube=$("$GO" list -m -f '{{.Version}}' k8s.io/kubernetes)
etcd=$("$GO" list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
minor=${kube#v1.}
minor=${minor%%.*}

# The version variables are what the Kubernetes release build stamps; without them /version says v0.0.0-master.
kubeldflags="-s -w
	-X k8s.io/component-base/version.gitVersion=$kube
	-X k8s.io/component-base/version.gitMajor=1
	-X k8s.io/component-base/version.gitMinor=$minor
	-X k8s.io/component-base/version.gitTreeState=clean"

build() { # build OUT PACKAGE LDFLAGS [DIR]: one at a time, so the big builds never compete for the cores
	local out=$1 pkg=$2 ldflags=$3 dir=${4:-.} start=$SECONDS
	echo "e2e/build.sh: building $out from $pkg in $dir"
	(cd "$dir" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$ldflags" -o "$here/$bin/$out.tmp" "$pkg")
	mv -f "$bin/$out.tmp" "$bin/$out"
	echo "e2e/build.sh: $out built in $((SECONDS - start))s"
}

mkdir -p "$bin"
if [[ "${1:-}" != -f && -x $bin/kube-apiserver && -x $bin/etcd && -x $bin/wardle && -f $stamp &&
	"$(cat "$stamp")" == "$want" ]]; then
	echo "e2e/build.sh: bin/kube-apiserver, bin/etcd and bin/wardle are up to date"
else
	rm -f "$stamp"
	build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$kubeldflags"
	build etcd go.etcd.io/etcd/server/v3 "-s -w"
	build wardle ./aggregator/wardle "$kubeldflags"
	echo "$want" >"$stamp"
	echo "e2e/build.sh: kube-apiserver $kube, etcd $etcd and wardle are in e2e/$bin"
fi

if [[ "${1:-}" != -f && -x $bin/kube-apiserver-patched && -f $stampPatched &&
	"$(cat "$stampPatched")" == "$wantPatched" ]]; then
	echo "e2e/build.sh: bin/kube-apiserver-patched is up to date"
	exit 0
fi
rm -f "$stampPatched"
# The build module lives outside the repository, where the Makefile's search for go.mod files cannot find it.
# -trimpath keeps its path out of the build cache's keys, so a new folder each time still hits the cache.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
GO=$GO aggregator/patched.sh "$work"
build kube-apiserver-patched k8s.io/kubernetes/cmd/kube-apiserver "$kubeldflags" "$work"
echo "$wantPatched" >"$stampPatched"
echo "e2e/build.sh: kube-apiserver $kube with aggregator/kube-aggregator.patch is in e2e/$bin/kube-apiserver-patched"
