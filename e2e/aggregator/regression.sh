#!/usr/bin/env bash
# Runs the patch's regression test, testdata/handler_proxy_goaway_test.go ($regression), in k8s.io/kube-aggregator's
# own package pkg/apiserver, twice: in a copy of the version e2e pins as released, and in one with
# kube-aggregator.patch applied. patched.sh makes each build module (-stock for the first); the test imports the
# library's pkg/goawaytest, which both modules replace by this work tree. The script fails unless the test fails
# on the stock source and passes on the patched one.
#
# The builds use build.sh's flags (CGO_ENABLED=0, -trimpath), so the packages that build.sh compiled for
# kube-apiserver-patched come from the build cache, whatever the temporary folder's name.
#
# Usage: aggregator/regression.sh
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
regression=TestProxyHandlerRefusedWrite
pkg=k8s.io/kube-aggregator/pkg/apiserver
export CGO_ENABLED=0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() { # run ARM WANT(pass|fail): the test in the ARM (stock or patched) build module, and a check of its outcome
	local arm=$1 want=$2 dir=$work/$1 log=$work/$1.log got start=$SECONDS
	GO=$GO aggregator/patched.sh $([[ $arm == stock ]] && echo -stock) "$dir"
	cp aggregator/testdata/handler_proxy_goaway_test.go "$dir/kube-aggregator/pkg/apiserver/"
	echo "aggregator/regression.sh: running $regression on the $arm source, expecting it to $want"
	if (cd "$dir" && "$GO" test -trimpath -count=1 -timeout 5m -v -run "^$regression\$" "$pkg") >"$log" 2>&1; then
		got=pass
	elif grep -q -e "^--- FAIL: $regression" "$log" && ! grep -q -e '\[build failed\]' -e '\[setup failed\]' "$log"; then
		got=fail
	else
		cat "$log"
		echo "aggregator/regression.sh: $regression did not build or run on the $arm source" >&2
		return 1
	fi
	grep -e '^\(=== RUN\|--- \|    \)' "$log" | sed 's/^/    /'
	if [[ $got != "$want" ]]; then
		echo "aggregator/regression.sh: $regression ${got}ed on the $arm source, want it to $want" >&2
		return 1
	fi
	echo "aggregator/regression.sh: $regression ${got}ed on the $arm source, as it must ($((SECONDS - start))s)"
}

run stock fail
run patched pass
