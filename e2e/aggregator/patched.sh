#!/usr/bin/env bash
# Makes DIR a build module for kube-apiserver with kube-aggregator.patch: e2e's go.mod and go.sum, with
# k8s.io/kube-aggregator replaced by DIR/kube-aggregator, a copy of the version e2e pins taken from the module cache
# with the patch applied, and github.com/teebody/teebody by this work tree, which the patch imports. It fails unless
# the two modules are the only ones whose versions differ from e2e's, so the patched build uses the same versions as
# the stock one. build.sh runs it, then builds kube-apiserver in DIR.
#
# With -stock, the copy is left as released: the same build module without the patch, for regression.sh, whose
# test imports the library's pkg/goawaytest.
#
# Usage: aggregator/patched.sh [-stock] DIR   (DIR is emptied first; build.sh passes a temporary folder)
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
arm=patched
if [[ "${1:-}" == -stock ]]; then
	arm=stock
	shift
fi
dir=${1:?usage: aggregator/patched.sh [-stock] DIR}
module=github.com/teebody/teebody/e2e/$arm
root=$(cd .. && pwd)

version=$("$GO" list -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' k8s.io/kube-aggregator)
dir=$(mkdir -p "$dir" && cd "$dir" && pwd)
src=$("$GO" mod download -json "k8s.io/kube-aggregator@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[[ -d $src ]] || { echo "aggregator/patched.sh: no module cache copy of k8s.io/kube-aggregator@$version" >&2; exit 1; }

rm -rf "$dir"
mkdir -p "$dir"
cp -R "$src" "$dir/kube-aggregator"
chmod -R u+w "$dir/kube-aggregator"
# git apply outside any repository (the ceiling keeps it from finding one around DIR); --check first, so
# that a patch that no longer applies changes nothing.
[[ $arm == stock ]] || (cd "$dir/kube-aggregator" && export GIT_CEILING_DIRECTORIES=$PWD/.. &&
	git apply --check "$OLDPWD/aggregator/kube-aggregator.patch" &&
	git apply "$OLDPWD/aggregator/kube-aggregator.patch")

cp go.mod go.sum "$dir/"
(cd "$dir" &&
	"$GO" mod edit -module="$module" \
		-replace=k8s.io/kube-aggregator=./kube-aggregator \
		-require=github.com/teebody/teebody@v0.0.0-00010101000000-000000000000 \
		-replace=github.com/teebody/teebody="$root")

# The same versions: only the two replaced modules may differ.
diff <("$GO" list -m all | grep -v -e '^github.com/teebody/teebody/e2e$' -e '^k8s.io/kube-aggregator ') \
	<(cd "$dir" && GOFLAGS=-mod=mod "$GO" list -m all |
		grep -v -e "^$module\$" -e '^github.com/teebody/teebody ' -e '^k8s.io/kube-aggregator ') ||
	{ echo "aggregator/patched.sh: the $arm build's module versions differ from e2e's (above)" >&2; exit 1; }
echo "aggregator/patched.sh: $dir builds kube-apiserver with k8s.io/kube-aggregator@$version$([[ $arm == stock ]] || echo " and kube-aggregator.patch")"
