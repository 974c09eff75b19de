#!/usr/bin/env bash
# Runs the bench suite and writes docs/BENCHMARKS.md and docs/sweep.svg.
#
# The headline is BenchmarkOutOfProcess: the proxy in a process of its own, in
# OOP_ROUNDS rounds, each of which runs every transport at every size in an
# order drawn from SEED and the round (recorded in the page). Between them run
# ROUNDS rounds of the in-process benchmarks that hold the memory and GOAWAY
# goals (BenchmarkLoad, BenchmarkGoaway, BenchmarkSlowClient; the transports'
# order rotating), then SWEEP_ROUNDS rounds of the concurrency sweep, then
# INSTR_ROUNDS rounds of the out-of-process cells at 1 KiB and 64 KiB (floor
# and teebody) with the proxy under valgrind's callgrind, which counts its
# instructions (skipped without valgrind). Then it
# takes a mutex profile at the sweep's top level and CPU profiles of the
# out-of-process proxy at 64 KiB and 1 MiB (plain, floor and teebody: adaptive
# runs teebody's code at 64 KiB and plain's above), and bench/report (its own module,
# on golang.org/x/perf) checks the goals and writes the page, with
# benchstat's tables. About 9 to 10 minutes on 2 cores with the defaults, more on a
# busy machine.
#
#   OOP_ROUNDS=9 ROUNDS=3 SWEEP_ROUNDS=3 INSTR_ROUNDS=3 INSTRTIME=300x BENCHTIME=1s SLOWTIME=3x SEED=N OUT=docs/BENCHMARKS.md bash bench/run.sh
#
# KEEP=DIR keeps the raw output, the profiles and meta.env in DIR;
# REPORT_FROM=DIR rewrites OUT from such a DIR without running anything.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

OOP_ROUNDS=${OOP_ROUNDS:-9}
ROUNDS=${ROUNDS:-3}
SWEEP_ROUNDS=${SWEEP_ROUNDS:-3}
INSTR_ROUNDS=${INSTR_ROUNDS:-3}
INSTRTIME=${INSTRTIME:-300x}
BENCHTIME=${BENCHTIME:-1s}
SLOWTIME=${SLOWTIME:-3x}
OUT=${OUT:-docs/BENCHMARKS.md}
case $OUT in /*) ;; *) OUT=$root/$OUT ;; esac
SVG=$(dirname "$OUT")/sweep.svg

if [ -n "${REPORT_FROM:-}" ]; then
	work=$(cd "$REPORT_FROM" && pwd)
	# shellcheck disable=SC1091 # written by an earlier run
	. "$work/meta.env"
else
	if [ -n "${KEEP:-}" ]; then
		mkdir -p "$KEEP"
		work=$(cd "$KEEP" && pwd)
	else
		work=$(mktemp -d)
		trap 'rm -rf "$work"' EXIT
	fi
	: >"$work/raw.txt"
	: >"$work/instr.txt"

	started=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
	t0=$(date +%s)
	load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)
	commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	if [ -n "$(git status --porcelain --untracked-files=no -- bench pkg go.mod go.sum 2>/dev/null)" ]; then
		commit="$commit, with uncommitted changes in bench/, pkg/ or go.mod"
	fi

	seed=${SEED:-$(date +%s)}

	echo "run.sh: building the suite" >&2
	go test -c -o "$work/bench.test" ./bench
	t="$work/bench.test -test.run ^\$"
	oop="-test.bench ^BenchmarkOutOfProcess\$ -test.benchtime $BENCHTIME"
	fast="-test.bench ^Benchmark(Load|Goaway)\$ -test.benchtime $BENCHTIME"
	slow="-test.bench ^BenchmarkSlowClient\$ -test.benchtime $SLOWTIME"
	sweep="-test.bench ^BenchmarkSweep\$ -test.benchtime 1x"
	mutex="-test.bench ^BenchmarkSweep/conc=2048/transport=teebody/size=1KiB\$ -test.benchtime 1x -test.mutexprofile mutex.out -test.mutexprofilefraction 1"
	instr="-test.bench ^BenchmarkOutOfProcess\$/^size=(1KiB|64KiB)/transport=(floor|teebody)\$ -test.benchtime $INSTRTIME"
	cpu="-test.bench ^BenchmarkOutOfProcess\$/^size=(64KiB|1MiB)/transport=(plain|floor|teebody)\$ -test.benchtime 2s"
	bench_command="go test -c -o bench.test ./bench; for i in 1..$OOP_ROUNDS: BENCH_SEED=$seed BENCH_ROUND=\$i ./bench.test $oop, and while i ≤ $ROUNDS: BENCH_ROUND=\$i ./bench.test $fast, then $slow; for i in 1..$SWEEP_ROUNDS: BENCH_ROUND=\$i ./bench.test $sweep; then ./bench.test $mutex; BENCH_PROFILE_DIR=. ./bench.test $cpu"
	instr_command="for i in 1..$INSTR_ROUNDS: BENCH_SEED=$seed BENCH_ROUND=\$i BENCH_CALLGRIND_DIR=DIR ./bench.test $instr"

	for i in $(seq 1 "$OOP_ROUNDS"); do
		echo "== round $i of $OOP_ROUNDS ($(($(date +%s) - t0)) s)" >&2
		# BENCH_SEED and BENCH_ROUND draw the order of the out-of-process
		# cells; BENCH_ROUND rotates the order of the in-process transports.
		# shellcheck disable=SC2086 # the flags are words on purpose
		BENCH_SEED=$seed BENCH_ROUND=$i $t $oop | tee -a "$work/raw.txt"
		if [ "$i" -le "$ROUNDS" ]; then
			# shellcheck disable=SC2086
			BENCH_ROUND=$i $t $fast | tee -a "$work/raw.txt"
			# shellcheck disable=SC2086
			BENCH_ROUND=$i $t $slow | tee -a "$work/raw.txt"
		fi
	done
	for i in $(seq 1 "$SWEEP_ROUNDS"); do
		echo "== sweep round $i of $SWEEP_ROUNDS ($(($(date +%s) - t0)) s)" >&2
		# shellcheck disable=SC2086
		BENCH_ROUND=$i $t $sweep | tee -a "$work/raw.txt"
	done
	if command -v valgrind >/dev/null && command -v callgrind_control >/dev/null; then
		mkdir -p "$work/callgrind"
		for i in $(seq 1 "$INSTR_ROUNDS"); do
			echo "== callgrind round $i of $INSTR_ROUNDS ($(($(date +%s) - t0)) s)" >&2
			# shellcheck disable=SC2086
			BENCH_SEED=$seed BENCH_ROUND=$i BENCH_CALLGRIND_DIR=$work/callgrind $t $instr | tee -a "$work/instr.txt"
		done
		rm -rf "$work/callgrind"
	else
		echo "run.sh: valgrind not found, no instruction counts" >&2
		instr_command=""
	fi
	echo "== noisy neighbours ($(($(date +%s) - t0)) s)" >&2
	# One run of each scenario; the section goes after the report's page.
	# shellcheck disable=SC2086
	NOISY_MD=$work/noisy.md $t -test.bench '^BenchmarkNoisy$' -test.benchtime 1x | tee "$work/noisy.txt"
	echo "== profiles ($(($(date +%s) - t0)) s)" >&2
	# shellcheck disable=SC2086
	(cd "$work" && $t $mutex >/dev/null && BENCH_SEED=$seed BENCH_PROFILE_DIR=$work $t $cpu >/dev/null)
	top() { go tool pprof -top "$@" 2>/dev/null | sed '/^File:/d; /^Build ID:/d; /^Type:/d; /^Time:/d'; }
	{
		top -nodecount 12 "$work/bench.test" "$work/mutex.out"
		echo
		echo "The same profile, only the stacks through package teebody (the Tees' and the Budget's locks):"
		top -nodecount 8 -focus 'pkg/teebody\.' "$work/bench.test" "$work/mutex.out"
	} >"$work/mutex.txt"
	{
		for size in 64KiB 1MiB; do
			for kind in teebody floor plain; do
				echo "$size, $kind:"
				top -nodecount 16 "$work/bench.test" "$work/cpu-$size-$kind.out"
				echo
			done
			echo "$size, teebody, only the stacks through package teebody:"
			top -nodecount 8 -focus 'pkg/teebody\.' "$work/bench.test" "$work/cpu-$size-teebody.out"
			echo
		done
	} >"$work/cpu.txt"
	rm -f "$work/bench.test"

	load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)
	t1=$(date +%s)
	elapsed="$(((t1 - t0) / 60)) min $(((t1 - t0) % 60)) s (OOP_ROUNDS=$OOP_ROUNDS, ROUNDS=$ROUNDS, SWEEP_ROUNDS=$SWEEP_ROUNDS, INSTR_ROUNDS=$INSTR_ROUNDS, INSTRTIME=$INSTRTIME, BENCHTIME=$BENCHTIME, SLOWTIME=$SLOWTIME)"
	{
		printf 'started=%q\n' "$started"
		printf 'elapsed=%q\n' "$elapsed"
		printf 'load_before=%q\n' "$load_before"
		printf 'load_after=%q\n' "$load_after"
		printf 'commit=%q\n' "$commit"
		printf 'seed=%q\n' "$seed"
		printf 'bench_command=%q\n' "$bench_command"
		printf 'instr_command=%q\n' "$instr_command"
	} >"$work/meta.env"
fi

# A run kept before the callgrind rounds existed has no instr.txt.
instr_file=$work/instr.txt
[ -f "$instr_file" ] || instr_file=""

# benchstat and the report come from bench/report's module (its tool
# directive and its x/perf requirement), never from the library's go.mod.
(cd bench/report && go tool benchstat -col '/transport@(plain floor teebody adaptive readall)' "$work/raw.txt") >"$work/benchstat.txt"
(cd bench/report && go run . \
	-raw "$work/raw.txt" \
	-instr "$instr_file" \
	-instr-command "${instr_command:-}" \
	-benchstat "$work/benchstat.txt" \
	-mutex "$work/mutex.txt" \
	-cpu "$work/cpu.txt" \
	-notes "$root/bench/NOTES.md" \
	-svg "$SVG" \
	-command "bash bench/run.sh" \
	-bench-command "$bench_command" \
	-commit "$commit" \
	-date "$started" \
	-elapsed "$elapsed" \
	-load-before "$load_before" \
	-load-after "$load_after" \
	-seed "$seed" \
	-out "$OUT")
if [ -f "$work/noisy.md" ]; then
	cat "$work/noisy.md" >>"$OUT"
fi
echo "run.sh: wrote $OUT and $SVG" >&2
