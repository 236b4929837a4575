#!/usr/bin/env bash
# Build the libFuzzer harnesses (test/fuzz/fuzz_*.cpp) with clang-16 and run them side by side.
#
#   test/fuzz/run.sh WORKDIR [SECONDS]      (scripts/test.sh's fuzz stage runs it)
#
# SECONDS 0: build only (WORKDIR/bin/NAME), e.g. to replay a crash: WORKDIR/bin/NAME file.
#
# Each harness is linked with the pure core (sources.mk's CORE_SOURCES) built with
# -fsanitize=fuzzer-no-link,address,undefined, and runs SECONDS (default 60) from its seed
# corpus test/fuzz/corpus/NAME/ (read only: new inputs go to WORKDIR/corpus/NAME). It fails on
# a crash, a sanitizer report, a leak, an out-of-memory or a slow input; the input that did it
# is saved as WORKDIR/artifacts/NAME-crash-* (reproduce: WORKDIR/bin/NAME that-file).
# A harness whose core source is not in sources.mk yet (fuzz_diskstats before the devices
# feature lands) is skipped with a note.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=${1:?usage: run.sh WORKDIR [SECONDS]}
SECONDS_EACH=${2:-60}
CXX=${FUZZ_CXX:-clang++-16}
command -v "$CXX" >/dev/null || { echo "run.sh: $CXX not found (Debian: clang-16 libclang-rt-16-dev)" >&2; exit 1; }

SAN=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
FLAGS=(-std=c++17 -g -O1 -I"$REPO/src" "${SAN[@]}")
mkdir -p "$WORK/obj" "$WORK/bin" "$WORK/artifacts"

mapfile -t core < <(printf 'include %s/sources.mk\nall:\n\t@printf "%%s\\n" $(CORE_SOURCES)\n' "$REPO" |
	make -s --no-print-directory -f - all)
objs=()
for src in "${core[@]}"; do
	o=$WORK/obj/$(basename "${src%.cpp}").o
	"$CXX" "${FLAGS[@]}" -fsanitize=fuzzer-no-link -c "$REPO/$src" -o "$o"
	objs+=("$o")
done

# harness -> the core source it needs (skipped while that source is not in sources.mk)
declare -A NEEDS=([fuzz_history_file]=src/core/history_file.cpp
	[fuzz_wait_class]=src/core/wait_class.cpp [fuzz_diskstats]=src/core/diskstats.cpp)
# Build every harness first, then run them side by side: each gets its SECONDS of wall time
# (libFuzzer's -max_total_time), so three take one SECONDS instead of three.
names=()
for harness in fuzz_history_file fuzz_wait_class fuzz_diskstats; do
	name=${harness#fuzz_}
	if ! printf '%s\n' "${core[@]}" | grep -qx "${NEEDS[$harness]}"; then
		echo "fuzz $name: SKIPPED (${NEEDS[$harness]} is not in sources.mk yet)"
		continue
	fi
	"$CXX" "${FLAGS[@]}" -fsanitize=fuzzer "$REPO/test/fuzz/$harness.cpp" "${objs[@]}" -o "$WORK/bin/$name"
	mkdir -p "$WORK/corpus/$name"
	if [ "$name" = history_file ]; then
		# Seeds in the current file format too (the committed ones may predate it).
		"$CXX" "${FLAGS[@]}" "$REPO/test/fuzz/make_history_seeds.cpp" "${objs[@]}" -o "$WORK/bin/make_history_seeds"
		"$WORK/bin/make_history_seeds" "$WORK/corpus/$name"
	fi
	if [ "$SECONDS_EACH" = 0 ]; then # build only (libFuzzer's own 0 would mean "forever")
		echo "fuzz $name: built $WORK/bin/$name"
		continue
	fi
	names+=("$name")
done

declare -A PIDS=()
for name in "${names[@]}"; do
	echo "fuzz $name: ${SECONDS_EACH}s from $(find "$REPO/test/fuzz/corpus/$name" -type f | wc -l) seeds"
	# -rss_limit_mb: a file may not make the reader allocate more than the ring it fills;
	# -timeout: one input must not take more than 10 s (a loop on a hostile count).
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		"$WORK/bin/$name" "$WORK/corpus/$name" "$REPO/test/fuzz/corpus/$name" \
		-max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-artifact_prefix="$WORK/artifacts/$name-" -print_final_stats=1 \
		>"$WORK/$name.log" 2>&1 &
	PIDS[$name]=$!
done

failed=0
for name in "${names[@]}"; do
	rc=0
	wait "${PIDS[$name]}" || rc=$?
	grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' "$WORK/$name.log" |
		awk -v p="fuzz $name: " '!seen[$0]++ {print p $0}' || true
	if [ "$rc" != 0 ]; then
		tail -60 "$WORK/$name.log"
		# The scratch folder goes at the end of the run: the input that failed, in the log too
		# (base64 -d >file to replay it).
		for f in "$WORK/artifacts/$name"-*; do
			[ -f "$f" ] && echo "fuzz $name: input $(basename "$f") (base64): $(base64 -w0 "$f")"
		done
		echo "fuzz $name: FAILED (exit $rc)"
		failed=1
	else
		echo "fuzz $name: no crash in ${SECONDS_EACH}s"
	fi
done
exit "$failed"
