#!/usr/bin/env bash
# Builds Traefik twice into bin/ (ignored by git) for the suite's TestTraefik: bin/traefik, Traefik $version as
# released, and bin/traefik-patched, the same with traefik/traefik.patch applied, which makes Traefik's
# httputil proxy keep request bodies with this repository's pkg/transport. Traefik's source is its module's copy in
# the Go module cache (go mod download), copied into a temporary folder; the patched copy also requires
# github.com/teebody/teebody, replaced by this work tree, as aggregator/patched.sh does for kube-apiserver. That
# raises Traefik's golang.org/x/net and its go directive to this library's (the script prints both).
#
# Before building the patched binary, in the patched copy, it runs with go test:
#   1. the patch's regression test ($regression, pkg/proxy/httputil/goaway_test.go) against Traefik's own proxy:
#      first with the test file alone applied, where it must fail, then with the whole patch, where it must pass;
#   2. Traefik's own tests of the package the patch touches (./pkg/proxy/httputil/...), which must pass.
# Any other outcome fails the script, and nothing is built.
#
# The module's copy of Traefik has no web UI: webui/embed.go embeds webui/static, which holds only a placeholder
# file there (a release builds the UI with yarn into it). The binaries build as they are and serve an empty
# dashboard, which the suite does not enable.
#
# A stamp, bin/.stamp-traefik, holds the hash of this script (which pins the version) and of the Go version, and
# skips the stock build when neither changed; bin/.stamp-traefik-patched adds the hash of the patch and of the
# library's sources (their non-test Go files, go.mod and go.sum), and skips the patched build and its tests. A cold
# build of each takes about 5 minutes on 2 cores; the patched one recompiles what imports x/net.
#
# Usage: ./build-traefik.sh [-f]   (-f rebuilds even when the stamps match)
set -euo pipefail
cd "$(dirname "$0")"

GO=${GO:-go}
module=github.com/traefik/traefik/v3
version=v3.6.12
regression=TestProxyBuilder_GOAWAY
testFile=pkg/proxy/httputil/goaway_test.go
here=$PWD
root=$(cd .. && pwd)
bin=$here/bin
stamp=$bin/.stamp-traefik
stampPatched=$bin/.stamp-traefik-patched

want=$( { cat "$0"; "$GO" version; } | sha256sum | cut -d' ' -f1)
wantPatched=$( {
	echo "$want"
	cat traefik/traefik.patch
	find ../pkg -type f -name '*.go' -not -name '*_test.go' | LC_ALL=C sort | xargs sha256sum
	sha256sum ../go.mod ../go.sum
} | sha256sum | cut -d' ' -f1)

# The flags of Traefik's own Makefile (CGO off, -s -w, the version stamped), with -trimpath so that the temporary
# folder's name stays out of the build cache's keys: go test below then reuses what go build compiled, and the other way round.
export CGO_ENABLED=0
ldflags="-s -w -X $module/pkg/version.Version=$version"

build() { # build OUT DIR: Traefik's ./cmd/traefik in DIR
	local out=$1 dir=$2 start=$SECONDS
	echo "e2e/build-traefik.sh: building $out in $dir"
	(cd "$dir" && "$GO" build -trimpath -ldflags "$ldflags" -o "$bin/$out.tmp" ./cmd/traefik)
	mv -f "$bin/$out.tmp" "$bin/$out"
	echo "e2e/build-traefik.sh: $out built in $((SECONDS - start))s: $("$bin/$out" version | tr -s ' \n' ' ')"
}

apply() { # apply DIR GIT-APPLY-ARGS...: the patch, or part of it, outside any repository
	local dir=$1
	shift
	(cd "$dir" && export GIT_CEILING_DIRECTORIES=$PWD/.. &&
		git apply --check "$@" "$here/traefik/traefik.patch" && git apply "$@" "$here/traefik/traefik.patch")
}

regressionTest() { # regressionTest DIR WANT(pass|fail): runs $regression in DIR and checks its outcome
	local dir=$1 want=$2 log
	log=$(mktemp)
	echo "e2e/build-traefik.sh: running $regression in $dir, expecting it to $want"
	if (cd "$dir" && "$GO" test -trimpath -count=1 -v -run "^$regression\$" ./pkg/proxy/httputil/) >"$log" 2>&1 &&
		grep -q -e "^--- PASS: $regression" "$log"; then
		got=pass
	elif grep -q -e "^--- FAIL: $regression" "$log" && ! grep -q -e '\[build failed\]' -e '\[setup failed\]' "$log"; then
		got=fail
	else
		cat "$log"
		rm -f "$log"
		echo "e2e/build-traefik.sh: $regression did not build or run" >&2
		return 1
	fi
	grep -e '^\(=== RUN\|--- \|    \)' "$log" | sed 's/^/    /' | head -40
	rm -f "$log"
	if [[ $got != "$want" ]]; then
		echo "e2e/build-traefik.sh: $regression: want $want, got $got" >&2
		return 1
	fi
	echo "e2e/build-traefik.sh: $regression: ${got}ed, as it must"
}

mkdir -p "$bin"
src=$("$GO" mod download -json "$module@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[[ -d $src ]] || { echo "e2e/build-traefik.sh: no module cache copy of $module@$version" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy() { # copy DIR: a writable copy of Traefik's source
	cp -R "$src" "$1"
	chmod -R u+w "$1"
}

if [[ "${1:-}" != -f && -x $bin/traefik && -f $stamp && "$(cat "$stamp")" == "$want" ]]; then
	echo "e2e/build-traefik.sh: bin/traefik is up to date"
else
	rm -f "$stamp"
	copy "$work/stock"
	build traefik "$work/stock"
	echo "$want" >"$stamp"
fi

if [[ "${1:-}" != -f && -x $bin/traefik-patched && -f $stampPatched && "$(cat "$stampPatched")" == "$wantPatched" ]]; then
	echo "e2e/build-traefik.sh: bin/traefik-patched is up to date"
	exit 0
fi
rm -f "$stampPatched"
dir=$work/patched
copy "$dir"
# The patch's go.mod change, made here since the library has no release to require: this work tree instead.
# -mod=mod then lets go test and go build record in go.mod and go.sum what the library's requirements raise.
(cd "$dir" && "$GO" mod edit -require=github.com/teebody/teebody@v0.0.0-00010101000000-000000000000 \
	-replace=github.com/teebody/teebody="$root")
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod"

apply "$dir" --include="$testFile"
regressionTest "$dir" fail
apply "$dir" --exclude="$testFile"
echo "e2e/build-traefik.sh: the library changed Traefik's go directive and these modules' versions (stock, then patched):"
diff <(cd "$src" && GOFLAGS='' "$GO" mod edit -json | sed -n 's/^\t"Go": "\(.*\)",$/go \1/p'; cd "$src" && GOFLAGS='' "$GO" list -m all) \
	<(cd "$dir" && "$GO" mod edit -json | sed -n 's/^\t"Go": "\(.*\)",$/go \1/p'; cd "$dir" && "$GO" list -m all) |
	sed -n 's/^\([<>]\) /    \1 /p' || true
regressionTest "$dir" pass

start=$SECONDS
echo "e2e/build-traefik.sh: running Traefik's tests of ./pkg/proxy/httputil/... with the patch"
(cd "$dir" && "$GO" test -trimpath -count=1 ./pkg/proxy/httputil/...)
echo "e2e/build-traefik.sh: Traefik's tests of ./pkg/proxy/httputil/... passed with the patch in $((SECONDS - start))s"

build traefik-patched "$dir"
echo "$wantPatched" >"$stampPatched"
echo "e2e/build-traefik.sh: Traefik $version with traefik/traefik.patch is in e2e/bin/traefik-patched"
