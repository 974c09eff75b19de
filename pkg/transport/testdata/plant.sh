#!/bin/sh
# Fuzzes FuzzUpstream against each defect that -tags teebody_plant plants
# (pkg/transport/plant.go), starting from the empty input alone, with a
# fuzz cache of its own, and prints how long the search took to find each.
# FUZZTIME bounds each search (default 5m); PLANTS picks some (default all).
# A finding is printed and its input removed from testdata/fuzz.
#
#	sh pkg/transport/testdata/plant.sh
set -u
cd "$(dirname "$0")/.." || exit 2
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-5m}
status=0
for p in ${PLANTS:-resend retrylater skipend}; do
	cache=$(mktemp -d)
	out=$(mktemp)
	TEEBODY_PLANT=$p TEEBODY_FUZZ_NOSEEDS=1 $GO test -tags teebody_plant -run '^$' -fuzz '^FuzzUpstream$' \
		-fuzztime "$FUZZTIME" . -args -test.fuzzcachedir="$cache" >"$out" 2>&1
	rc=$?
	input=$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/FuzzUpstream\/[0-9a-f]*\).*/\1/p' "$out")
	if [ "$rc" -eq 0 ] || [ -z "$input" ]; then
		echo "plant $p: NOT FOUND within $FUZZTIME (exit $rc)"
		tail -5 "$out"
		status=1
	else
		# The last progress line before the failure: the fuzzing time.
		at=$(sed -n 's/^fuzz: elapsed: \([0-9hms]*\), execs: \([0-9]*\).*/\1 (\2 execs)/p' "$out" | tail -1)
		echo "plant $p: found after ${at:-less than 3s} of fuzzing"
		grep -E 'request [0-9]+|Drain|held|panic:' "$out" | grep -v '^\s*request [0-9]*: [0-9]* bytes' | head -4 | sed 's/^/    /'
		mv "$input" "${TMPDIR:-/tmp}/FuzzUpstream-$p" && echo "    input: ${TMPDIR:-/tmp}/FuzzUpstream-$p"
	fi
	rm -rf "$cache" "$out"
done
rmdir testdata/fuzz/FuzzUpstream testdata/fuzz 2>/dev/null
exit $status
