#!/usr/bin/env bash
# Runs the bench suite and writes docs/BENCHMARKS.md.
#
# The suite runs in ROUNDS interleaved rounds (each round runs every
# benchmark once), so that a burst of outside load on a shared machine hits
# every transport alike; benchstat and bench/report then summarise the rounds.
# About 6–9 minutes on 2 cores with the defaults.
#
#   ROUNDS=8 BENCHTIME=1s OUT=docs/BENCHMARKS.md bash bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-8}
BENCHTIME=${BENCHTIME:-1s}
SLOWTIME=${SLOWTIME:-2x}
OUT=${OUT:-docs/BENCHMARKS.md}
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

started=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
t0=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)
commit=$(git describe --always --dirty 2>/dev/null || echo unknown)

go test -c -o "$work/bench.test" ./bench

fast="-test.run ^\$ -test.bench ^Benchmark(Proxy|Load|Goaway)\$ -test.benchtime $BENCHTIME -test.count 1"
slow="-test.run ^\$ -test.bench ^BenchmarkSlowClient\$ -test.benchtime $SLOWTIME -test.count 1"
bench_command="go test -c -o bench.test ./bench; then $ROUNDS times: ./bench.test $fast; ./bench.test $slow"

for i in $(seq 1 "$ROUNDS"); do
	echo "== round $i of $ROUNDS ($(($(date +%s) - t0)) s)" >&2
	# shellcheck disable=SC2086 # the flags are words on purpose
	"$work/bench.test" $fast | tee -a "$work/raw.txt"
	# shellcheck disable=SC2086
	"$work/bench.test" $slow | tee -a "$work/raw.txt"
done

load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)

# benchstat is fetched through the Go module proxy; without it the report is
# written all the same, without its tables.
: >"$work/vs-plain.txt"
: >"$work/vs-readall.txt"
if ! go run "$BENCHSTAT" -col '/transport@(plain teebody readall)' "$work/raw.txt" >"$work/vs-plain.txt" ||
	! go run "$BENCHSTAT" -col '/transport@(readall teebody plain)' "$work/raw.txt" >"$work/vs-readall.txt"; then
	echo "run.sh: benchstat failed; writing the report without its tables" >&2
	: >"$work/vs-plain.txt"
	: >"$work/vs-readall.txt"
fi

t1=$(date +%s)
go run ./bench/report \
	-raw "$work/raw.txt" \
	-vs-plain "$work/vs-plain.txt" \
	-vs-readall "$work/vs-readall.txt" \
	-notes bench/NOTES.md \
	-command "bash bench/run.sh" \
	-bench-command "$bench_command" \
	-commit "$commit" \
	-date "$started" \
	-elapsed "$(((t1 - t0) / 60)) min $(((t1 - t0) % 60)) s (ROUNDS=$ROUNDS, BENCHTIME=$BENCHTIME)" \
	-load-before "$load_before" \
	-load-after "$load_after" \
	-out "$OUT"
echo "run.sh: wrote $OUT in $(($(date +%s) - t0)) s" >&2
