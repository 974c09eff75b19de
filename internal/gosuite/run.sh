#!/usr/bin/env bash
# Runs the Go toolchain's own net/http/httputil tests with teebody's transport
# as http.DefaultTransport, which every ReverseProxy without a Transport uses.
#
#   internal/gosuite/run.sh [-plain] [go test flags...]   e.g. -count=5, -run X
#
# The package and its tests are copied from $(go env GOROOT) into a throwaway
# module under a temporary directory, never into the repository. Imports that
# only the standard library may use are rewritten to copies of what they need
# (net/http/internal's chunked coding, net/http/internal/ascii) or, for
# internal/godebug, to testdata/godebug. testdata/loopback_test.go turns DNS
# off, so that the suite reaches loopback only. testdata/teebody_test.go
# installs the transport and fails the run if no body went through it; -plain
# leaves it out, to check the suite on the plain transport. GO names the go
# command.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
go=${GO:-go}

plain=
if [ "${1:-}" = -plain ]; then
	plain=1
	shift
fi

goroot=$("$go" env GOROOT)
src=$goroot/src/net/http
mod=teebody.test/gosuite
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/httputil" "$tmp/internal/ascii" "$tmp/internal/godebug"
cp "$src"/httputil/*.go "$tmp/httputil/"
cp "$src/internal/chunked.go" "$tmp/internal/"
cp "$src/internal/ascii/print.go" "$tmp/internal/ascii/"
cp "$here/testdata/godebug/godebug.go" "$tmp/internal/godebug/"
cp "$here/testdata/loopback_test.go" "$tmp/httputil/"
if [ -z "$plain" ]; then
	cp "$here/testdata/teebody_test.go" "$tmp/httputil/"
fi
sed -i \
	-e "s#\"net/http/internal/ascii\"#\"$mod/internal/ascii\"#" \
	-e "s#\"net/http/internal\"#\"$mod/internal\"#" \
	-e "s#\"internal/godebug\"#\"$mod/internal/godebug\"#" \
	-e "s#\"net/http/httputil\"#\"$mod/httputil\"#" \
	"$tmp"/httputil/*.go
if grep -n '"internal/\|"net/http/internal' "$tmp"/httputil/*.go "$tmp"/internal/*.go "$tmp"/internal/ascii/*.go; then
	echo "gosuite: an import of the standard library's internals is left (above): run.sh needs a rewrite for it" >&2
	exit 1
fi

cat >"$tmp/go.mod" <<MOD
module $mod

go 1.26.0

require github.com/teebody/teebody v0.0.0

replace github.com/teebody/teebody => $repo
MOD
cp "$repo/go.sum" "$tmp/"

cd "$tmp"
"$go" mod tidy
"$go" version
"$go" test "$@" ./httputil
