#!/usr/bin/env bash
# Runs the bench suite and writes docs/BENCHMARKS.md.
#
# The suite runs in ROUNDS interleaved rounds (each round runs every
# benchmark once), so that a burst of outside load on a shared machine hits
# every transport alike; benchstat and bench/report then summarise the rounds.
# About 8–10 minutes on 2 cores with the defaults.
#
#   ROUNDS=10 BENCHTIME=1s SLOWTIME=3x OUT=docs/BENCHMARKS.md bash bench/run.sh
#
# KEEP=DIR keeps the raw output (raw.txt, the benchstat tables, meta.env) in
# DIR; REPORT_FROM=DIR rewrites OUT from such a DIR without running anything.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-10}
BENCHTIME=${BENCHTIME:-1s}
SLOWTIME=${SLOWTIME:-3x}
OUT=${OUT:-docs/BENCHMARKS.md}
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

if [ -n "${REPORT_FROM:-}" ]; then
	work=$REPORT_FROM
	# shellcheck disable=SC1091 # written by an earlier run
	. "$work/meta.env"
else
	if [ -n "${KEEP:-}" ]; then
		work=$KEEP
		mkdir -p "$work"
		: >"$work/raw.txt"
	else
		work=$(mktemp -d)
		trap 'rm -rf "$work"' EXIT
	fi

	started=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
	t0=$(date +%s)
	load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)
	commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	if [ -n "$(git status --porcelain --untracked-files=no -- bench pkg go.mod go.sum 2>/dev/null)" ]; then
		commit="$commit, with uncommitted changes in bench/, pkg/ or go.mod"
	fi

	go test -c -o "$work/bench.test" ./bench

	fast="-test.run ^\$ -test.bench ^Benchmark(Proxy|Load|Goaway)\$ -test.benchtime $BENCHTIME -test.count 1"
	slow="-test.run ^\$ -test.bench ^BenchmarkSlowClient\$ -test.benchtime $SLOWTIME -test.count 1"
	bench_command="go test -c -o bench.test ./bench; then for i in 1..$ROUNDS: BENCH_ROUND=\$i ./bench.test $fast; BENCH_ROUND=\$i ./bench.test $slow"

	for i in $(seq 1 "$ROUNDS"); do
		echo "== round $i of $ROUNDS ($(($(date +%s) - t0)) s)" >&2
		# BENCH_ROUND rotates the order of the transports from round to round.
		# shellcheck disable=SC2086 # the flags are words on purpose
		BENCH_ROUND=$i "$work/bench.test" $fast | tee -a "$work/raw.txt"
		# shellcheck disable=SC2086
		BENCH_ROUND=$i "$work/bench.test" $slow | tee -a "$work/raw.txt"
	done
	rm -f "$work/bench.test"

	load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)

	# benchstat is fetched through the Go module proxy; without it the
	# report is written all the same, without its tables.
	if ! go run "$BENCHSTAT" -col '/transport@(plain teebody readall)' "$work/raw.txt" >"$work/vs-plain.txt" ||
		! go run "$BENCHSTAT" -col '/transport@(readall teebody plain)' "$work/raw.txt" >"$work/vs-readall.txt"; then
		echo "run.sh: benchstat failed; writing the report without its tables" >&2
		: >"$work/vs-plain.txt"
		: >"$work/vs-readall.txt"
	fi
	t1=$(date +%s)
	elapsed="$(((t1 - t0) / 60)) min $(((t1 - t0) % 60)) s (ROUNDS=$ROUNDS, BENCHTIME=$BENCHTIME, SLOWTIME=$SLOWTIME)"
	{
		printf 'started=%q\n' "$started"
		printf 'elapsed=%q\n' "$elapsed"
		printf 'load_before=%q\n' "$load_before"
		printf 'load_after=%q\n' "$load_after"
		printf 'commit=%q\n' "$commit"
		printf 'bench_command=%q\n' "$bench_command"
	} >"$work/meta.env"
fi

go run ./bench/report \
	-raw "$work/raw.txt" \
	-vs-plain "$work/vs-plain.txt" \
	-vs-readall "$work/vs-readall.txt" \
	-notes bench/NOTES.md \
	-command "bash bench/run.sh" \
	-bench-command "$bench_command" \
	-commit "$commit" \
	-date "$started" \
	-elapsed "$elapsed" \
	-load-before "$load_before" \
	-load-after "$load_after" \
	-out "$OUT"
echo "run.sh: wrote $OUT" >&2
