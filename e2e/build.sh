#!/usr/bin/env bash
# Builds the two servers the end-to-end suite runs, kube-apiserver and etcd, from the versions pinned in this
# module's go.mod, into bin/ (ignored by git). A stamp holding the hash of the module graph (go list -m all: every
# module's version, replacements included), this script and the Go version skips the build when none of them
# changed; a cold build takes about 5 minutes on 2 cores.
#
# Usage: ./build.sh [-f]   (-f rebuilds even when the stamp matches)
set -euo pipefail
cd "$(dirname "$0")"

GO=${GO:-go}
bin=bin
stamp=$bin/.stamp

want=$( { "$GO" list -m all; cat "$0"; "$GO" version; } | sha256sum | cut -d' ' -f1)
if [[ "${1:-}" != -f && -x $bin/kube-apiserver && -x $bin/etcd && -f $stamp && "$(cat "$stamp")" == "$want" ]]; then
	echo "e2e/build.sh: bin/kube-apiserver and bin/etcd are up to date"
	exit 0
fi

mkdir -p "$bin"
rm -f "$stamp"

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

build() { # build OUT PACKAGE LDFLAGS: one at a time, so the two big builds never compete for the cores
	local out=$1 pkg=$2 ldflags=$3 start=$SECONDS
	echo "e2e/build.sh: building $out from $pkg"
	CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$ldflags" -o "$bin/$out.tmp" "$pkg"
	mv -f "$bin/$out.tmp" "$bin/$out"
	echo "e2e/build.sh: $out built in $((SECONDS - start))s"
}

build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$kubeldflags"
build etcd go.etcd.io/etcd/server/v3 "-s -w"

echo "$want" >"$stamp"
echo "e2e/build.sh: kube-apiserver $kube and etcd $etcd are in e2e/$bin"
