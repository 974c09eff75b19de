#!/usr/bin/env bash
# Builds bin/caddy (ignored by git): Caddy with its standard modules and teebody's transport module, from
# contrib/caddy/cmd/caddy, as `xcaddy build --with github.com/teebody/teebody/contrib/caddy` would; the suite's
# TestCaddy runs it in front of nginx. A stamp, bin/.stamp-caddy, holds the hash of contrib/caddy's module graph
# (go list -m all), of the repository's sources the binary is built from (contrib/caddy, contrib/prometheus, the
# library: their non-test Go files, go.mod and go.sum), of this script and of the Go version, and skips the build
# when none of them changed. It is a script of its own, beside build.sh, so that a change of the module rebuilds
# Caddy alone and never kube-apiserver.
#
# Usage: ./build-caddy.sh [-f]   (-f rebuilds even when the stamp matches)
set -euo pipefail
cd "$(dirname "$0")"

GO=${GO:-go}
bin=$PWD/bin
stamp=$bin/.stamp-caddy

want=$( {
	(cd ../contrib/caddy && "$GO" list -m all)
	find ../contrib/caddy ../contrib/prometheus ../pkg -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) \
		-not -name '*_test.go' | LC_ALL=C sort | xargs sha256sum
	sha256sum ../go.mod ../go.sum
	cat "$0"
	"$GO" version
} | sha256sum | cut -d' ' -f1)
if [[ "${1:-}" != -f && -x $bin/caddy && -f $stamp && "$(cat "$stamp")" == "$want" ]]; then
	echo "e2e/build-caddy.sh: bin/caddy is up to date"
	exit 0
fi

mkdir -p "$bin"
rm -f "$stamp"
start=$SECONDS
echo "e2e/build-caddy.sh: building caddy from contrib/caddy/cmd/caddy"
# The go command's default flags (no -trimpath): the packages are then those that make modcheck compiled already
# (.ci/run runs it first; make test's are built for the race detector), and the build is mostly a link.
(cd ../contrib/caddy && "$GO" build -ldflags "-s -w" -o "$bin/caddy.tmp" ./cmd/caddy)
mv -f "$bin/caddy.tmp" "$bin/caddy"
echo "$want" >"$stamp"
echo "e2e/build-caddy.sh: caddy built in $((SECONDS - start))s: $("$bin/caddy" version)"
