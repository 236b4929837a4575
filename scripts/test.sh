#!/usr/bin/env bash
# The project's one test command (README, CI's .ci/run). On a fresh Debian 12 machine, as root,
# it provisions what it needs and runs every stage:
#
#   scripts/test.sh [--only STAGE[,STAGE...]] [--keep]
#
#   unit   the pure C++ core's unit tests: CMake + ctest, -Werror, on the host
#   inject the latency-injection library's self-test (test/inject/check_inject.sh)
#   pg18   PostgreSQL 18.6 release build (what users run; the sanitize stage runs the same tests
#          with the sanitizers): PGXS build with WERROR=1, install, `make installcheck`
#          (pg_regress on a temporary instance, then the TAP tests, including the
#          latency-injection accuracy tests; PGSW_ACCURACY_TESTS=0 leaves those out)
#   pg17   the same against Debian 13's PostgreSQL 17 inside a chroot
#   pg16   the same against PostgreSQL 16.14, an assert build from the project's source archive
#          (../shared/postgres-src/); first checks that switching PG_CONFIG from 18 to 16
#          rebuilds every object and that `make clean PG_CONFIG=<16>` works.
#          PGSW_RELEASE_ACCURACY="16 19": the accuracy test on a release build of 16 instead
#   pg19   the same against PostgreSQL 19beta2 (assert build, same folder); first checks
#          compat.hpp's guard against a major newer than the newest tested
#   pg15   building against PostgreSQL 15 must be refused at once with a clear message, and
#          `make clean` must work with that pg_config
#   sanitize  the pg18 stage on the same 18.6 build, with the extension built with
#          AddressSanitizer + UBSan and the sanitizer runtime preloaded into every server
#          (accuracy tests left out); fails on any sanitizer report (test/sanitizer/:
#          suppressions, each justified). First a canary (test/sanitizer/canary.cpp) commits a
#          heap overflow and a UBSan shift in a throwaway server: the stage fails unless both
#          reports reach the log folder
#   fuzz   libFuzzer harnesses (clang-16) of the history file reader, the wait-event
#          classification...: each runs PGSW_FUZZ_SECONDS (default 60) from its seed corpus in
#          test/fuzz/corpus/; fails on a crash, a leak, a timeout or a sanitizer report
#   integrations  promtool check/test of the alerts; the Debian package built with
#          dpkg-buildpackage in a packaging copy of the PostgreSQL 17 chroot, lintian, installed
#          into a clean copy of that chroot: CREATE EXTENSION and pg_regress against it; then on
#          that server after pgbench: every Grafana panel's SQL (integrations/check_dashboard.py),
#          the real postgres_exporter with queries.yaml and a real prometheus scraping it
#          (integrations/test_integrations.sh); META.json against the control file
#
#   Order: provision (Debian packages, then PostgreSQL 18 while the PostgreSQL 17 chroot
#   downloads beside it), then unit, inject, pg15 and fuzz while the other servers build in the
#   background (waited for as provision-bg), then pg18, pg17, pg16, pg19, devices, sanitize,
#   integrations. Assertions (--enable-cassert) are exercised by the pg16 and pg19 stages.
#
#   --only  run only these stages (repeatable or comma-separated); default: all
#   --keep  keep the scratch build folders (printed at the end) for inspection
#
# Ends with a summary table and the line "N passed, N failed" (", N skipped" when any were);
# exits non-zero when any stage failed. Servers are run by an unprivileged user (initdb refuses
# root): `postgres` if it exists, else a system user `pgsw` created for the purpose.
#
# Environment: PGSW_CACHE (servers, default ~/.cache/pg_storage_wait), PGSW_WORK (scratch,
# default /tmp/pg_storage_wait-test.$USER), PGSW_TEST_TIMEOUT (seconds per installcheck,
# default 1800), JOBS (default nproc), PGSW_FUZZ_SECONDS (per fuzz harness, default 60).
# While developing: PGSW_PROVE_TESTS (TAP files to run, e.g. "test/t/013_devices.pl") and
# PGSW_REGRESS (pg_regress files; set but empty runs none), for the server stages.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC2034 # read by lib.sh
PGSW_TAG=pgsw-test
# shellcheck source=lib.sh source-path=SCRIPTDIR
. "$REPO/scripts/lib.sh"

HOME=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)} # CI may not set it
export HOME
PGSW_CACHE=${PGSW_CACHE:-$HOME/.cache/pg_storage_wait}
export PGSW_CACHE # provision-postgres.sh reads the same variable
PG18_VERSION=${PG18_VERSION:-18.6}
export PG18_VERSION
PG16_VERSION=${PG16_VERSION:-16.14}
PG19_VERSION=${PG19_VERSION:-19beta2}
export PG16_VERSION PG19_VERSION
PG16_PREFIX=$PGSW_CACHE/pg-$PG16_VERSION-assert
PG19_PREFIX=$PGSW_CACHE/pg-$PG19_VERSION-assert
# 18's stages (pg18, sanitize, devices) run on its release build, as users' servers are; 16's
# and 19's on assert builds, which check PostgreSQL's assertions under every test. test/t/005
# compares the server's timings with pgbench's own, which an assert build distorts (its what-if check is then
# only reported: test/t/005): PGSW_RELEASE_ACCURACY="16 19" also builds release servers of those
# majors (~4 minutes each, once: cached) and runs that file on them instead.
PG18_RELEASE_PREFIX=$PGSW_CACHE/pg-$PG18_VERSION-release
PG16_RELEASE_PREFIX=$PGSW_CACHE/pg-$PG16_VERSION-release
PG19_RELEASE_PREFIX=$PGSW_CACHE/pg-$PG19_VERSION-release
RELEASE_TAP_FILES=(test/t/005_accuracy.pl)
PGSW_RELEASE_ACCURACY=${PGSW_RELEASE_ACCURACY:-}
for major in $PGSW_RELEASE_ACCURACY; do
	case $major in 16 | 19) ;; *) echo "PGSW_RELEASE_ACCURACY: '$major' is not 16 or 19" >&2; exit 2 ;; esac
done
CHROOT17=$PGSW_CACHE/chroot-trixie-pg17
PG17_CONFIG=/usr/lib/postgresql/17/bin/pg_config # inside the chroot
PG15_CONFIG=/usr/lib/postgresql/15/bin/pg_config
# Scratch space lives in /tmp, not in the cache: root's home is mode 700, so the unprivileged
# test user could not reach a build folder (or a server binary) under it.
PGSW_WORK=${PGSW_WORK:-/tmp/pg_storage_wait-test.$(id -un)}
TEST_TIMEOUT=${PGSW_TEST_TIMEOUT:-1800}
JOBS=${JOBS:-$(nproc)}
ALL_STAGES=(unit inject pg18 pg17 pg16 pg19 pg15 devices sanitize fuzz integrations)
# Every stage tests this one copy of the source tree, taken when the run starts: a tree that
# is being edited meanwhile must not give each stage a different version.
SNAPSHOT=$PGSW_WORK/snapshot
SKIP_RC=77 # a stage function returns this to say "skipped" (the automake convention)
MAIN_PID=$$ # this run, as the chroot's mount holders name it
# The pg17 stage's build folder inside the chroot, named after the scratch folder so that two
# runs with different PGSW_WORK (parallel sessions) never share it.
CHROOT_INNER=/build/$(basename "$PGSW_WORK")

KEEP=0
SELECTED=()

usage() {
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
}

parse_args() {
	local s
	while [ $# -gt 0 ]; do
		case "$1" in
		--only)
			[ $# -ge 2 ] || die "--only needs a stage: ${ALL_STAGES[*]}"
			IFS=, read -r -a s <<<"$2"
			SELECTED+=("${s[@]}")
			shift 2
			;;
		--only=*)
			IFS=, read -r -a s <<<"${1#--only=}"
			SELECTED+=("${s[@]}")
			shift
			;;
		--keep)
			KEEP=1
			shift
			;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown argument '$1'" ;;
		esac
	done
	[ ${#SELECTED[@]} -gt 0 ] || SELECTED=("${ALL_STAGES[@]}")
	for s in "${SELECTED[@]}"; do
		case " ${ALL_STAGES[*]} " in *" $s "*) ;; *) die "unknown stage '$s' (stages: ${ALL_STAGES[*]})" ;; esac
	done
}

selected() { case " ${SELECTED[*]} " in *" $1 "*) return 0 ;; *) return 1 ;; esac }

# --------------------------------------------------------------------------------------------
# Running things as the unprivileged test user, with a clean environment: a caller's PGPORT,
# PGHOST, PGDATA or LC_* would otherwise leak into pg_regress and the TAP framework.

TEST_USER=
TEST_HOME=
# Prepended to the command by as_test_user and in_chroot when set (a timeout(1) cannot wrap a
# shell function, so the runners apply it to the real command themselves).
TIMEOUT_PREFIX=()

clean_env() { # clean_env HOME -> prints env(1) assignments, one per line
	printf '%s\n' "HOME=$1" "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		"LANG=C.UTF-8"
	local v
	for v in PG_TEST_EXTRA PG_TEST_TIMEOUT_DEFAULT PG_TEST_NOCLEAN PGSW_ACCURACY_TESTS PGSW_QUIET_MACHINE \
		PGSW_ACCURACY_SECONDS; do
		[ -z "${!v:-}" ] || printf '%s\n' "$v=${!v}"
	done
}

setup_test_user() {
	if [ "$(id -u)" != 0 ]; then
		TEST_USER=$(id -un)
		TEST_HOME=$HOME
		return
	fi
	if id -u postgres >/dev/null 2>&1; then
		TEST_USER=postgres
	else
		id -u pgsw >/dev/null 2>&1 || {
			say "creating system user pgsw to run test servers (initdb refuses root)"
			useradd --system --user-group --create-home --home-dir /var/lib/pgsw \
				--shell /usr/sbin/nologin pgsw
		}
		TEST_USER=pgsw
	fi
	TEST_HOME=$(getent passwd "$TEST_USER" | cut -d: -f6)
	[ -d "$TEST_HOME" ] || TEST_HOME=$PGSW_WORK
}

# as_test_user CMD...: run CMD as the test user (runuser: the root-only su, no PAM password
# step and no login shell needed, so it also works for a nologin system user).
as_test_user() {
	local envs
	mapfile -t envs < <(clean_env "$TEST_HOME")
	if [ "$(id -u)" = 0 ]; then
		"${TIMEOUT_PREFIX[@]}" runuser -u "$TEST_USER" -- env -i "${envs[@]}" "$@"
	else
		"${TIMEOUT_PREFIX[@]}" env -i "${envs[@]}" "$@"
	fi
}

# in_chroot USER CMD...: run CMD inside the PostgreSQL 17 chroot as USER (root or postgres).
in_chroot() {
	local user=$1 envs home=/root
	shift
	[ "$user" = root ] || home=$(awk -F: -v u="$user" '$1 == u {print $6}' "$CHROOT17/etc/passwd")
	mapfile -t envs < <(clean_env "$home")
	if [ "$user" = root ]; then
		"${TIMEOUT_PREFIX[@]}" chroot "$CHROOT17" /usr/bin/env -i "${envs[@]}" "$@"
	else
		"${TIMEOUT_PREFIX[@]}" chroot "$CHROOT17" /usr/sbin/runuser -u "$user" -- /usr/bin/env -i "${envs[@]}" "$@"
	fi
}

# A fresh, empty scratch folder: stop what a killed or --keep run left running there, wipe.
fresh_dir() {
	kill_processes_under "$1"
	remove_scratch "$1"
	mkdir -p -- "$1"
}

# `make installcheck` (runner given as "$@", e.g. as_test_user or in_chroot postgres) in build
# folder $1 (as the runner sees it: inside the chroot it differs from the host path $2).
# On failure print every log, then fail.
run_installcheck() {
	local dir=$1 hostdir=$2 rc=0 tap_logs=1 out
	shift 2
	out=$(mktemp "$PGSW_WORK/installcheck.XXXXXX")
	# A developer's subset (never set by CI): PGSW_PROVE_TESTS="test/t/013_devices.pl ...",
	# PGSW_REGRESS="answer symptoms" (set but empty: no pg_regress at all).
	# TAP_FILES, when the caller sets it: the files chosen for this build (see tap_files).
	if [ -n "${TAP_FILES+set}" ]; then
		if [ -n "$TAP_FILES" ]; then MAKE_VARS+=(PROVE_TESTS="$TAP_FILES"); else MAKE_VARS+=(TAP_TESTS=); fi
	elif [ -n "${PGSW_PROVE_TESTS:-}" ]; then
		MAKE_VARS+=(PROVE_TESTS="$PGSW_PROVE_TESTS")
	fi
	if [ -n "${PGSW_REGRESS+set}" ]; then
		local preloaded=() not_preloaded=() f
		for f in $PGSW_REGRESS; do
			if [ "$f" = not_preloaded ]; then not_preloaded+=("$f"); else preloaded+=("$f"); fi
		done
		MAKE_VARS+=(REGRESS="${preloaded[*]}" REGRESS_NOT_PRELOADED="${not_preloaded[*]}")
	fi
	say "make installcheck (pg_regress, then TAP) in $dir, timeout ${TEST_TIMEOUT}s"
	TIMEOUT_PREFIX=(timeout -k 30 "$TEST_TIMEOUT")
	"$@" make -C "$dir" "${MAKE_VARS[@]}" installcheck 2>&1 | tee "$out" || rc=$?
	# A failing pg_regress stops make before the TAP tests. Run the whole target again with
	# make -i (go on after failing commands, whatever the Makefile's recipe looks like), so one
	# CI run reports both; its exit status means nothing, prove's "Result:" lines do (one per
	# group of TAP files: test/prove_in_groups.sh).
	if [ "$rc" != 0 ] && [ "$rc" != 124 ] && ! grep -q '^Result: ' "$out" &&
		[ -n "$(find_regress_files "$hostdir" regression.diffs)" ] &&
		grep -q '^TAP_TESTS *= *1' "$hostdir/Makefile"; then
		# The rerun runs pg_regress again and replaces its files: show this run's first.
		print_failure_logs "$hostdir" 0
		say "pg_regress failed (make exit $rc), so make skipped the TAP tests: running them too (make -i)"
		"$@" make -i -C "$dir" "${MAKE_VARS[@]}" installcheck 2>&1 | tee "$out" || true
		if grep -q '^Result: PASS' "$out" && ! grep -q '^Result: FAIL' "$out"; then
			say "TAP tests passed (the stage fails on pg_regress)"
			tap_logs=0
		else
			say "TAP tests failed too"
		fi
	fi
	TIMEOUT_PREFIX=()
	rm -f "$out"
	[ "$rc" != 124 ] || warn "make installcheck timed out after ${TEST_TIMEOUT}s"
	# pg_regress and the TAP framework stop their servers, also on failure: anything still
	# running is a test that leaks a server, which fails the stage (after stopping it).
	if [ -n "$(pids_under "$hostdir" postgres)" ]; then
		warn "a test left a PostgreSQL server running under $hostdir"
		kill_processes_under "$hostdir"
		[ "$rc" != 0 ] || rc=1
		tap_logs=1
	fi
	if [ "$rc" != 0 ]; then
		print_failure_logs "$hostdir" "$tap_logs"
		return 1
	fi
}

# --------------------------------------------------------------------------------------------
# Stages. Each runs in its own subshell with `set -e`: the first failing command ends the stage
# (not the script), and a stage's EXIT trap (chroot mounts) fires however the stage ends.

# Provisioning in three parts, so that a fresh machine builds servers while it downloads and
# while the stages that need no server run (unit, inject, pg15, fuzz: time-boxed, it only gets
# fewer runs): the Debian packages, then PostgreSQL 18 (the build of everything) while the
# PostgreSQL 17 chroot downloads beside it, then the rest in the background, waited for (stage
# provision-bg) before the first stage that needs it. On a warm machine all take seconds.
provision_fg_steps() {
	local steps=()
	if selected pg18 || selected sanitize || selected devices || selected pg16; then
		steps+=(pg18-release)
	fi
	echo "${steps[@]}"
}

# The builds first: the pg17 step may wait for the chroot's early download (start_early_provision).
provision_bg_steps() {
	local steps=()
	if selected pg16; then steps+=(pg16); fi
	if selected pg19; then steps+=(pg19); fi
	local major
	for major in $PGSW_RELEASE_ACCURACY; do
		if selected "pg$major"; then steps+=("pg$major-release"); fi
	done
	if selected pg17 || selected integrations; then steps+=(pg17); fi
	if selected integrations; then steps+=(integrations); fi
	echo "${steps[@]}"
}

stage_provision() {
	local steps
	bash "$REPO/scripts/provision-postgres.sh" deps
	start_early_provision
	read -r -a steps <<<"$(provision_fg_steps)"
	[ ${#steps[@]} -gt 0 ] || return 0
	say "scripts/provision-postgres.sh ${steps[*]} (first run on a fresh machine: ~5 minutes)"
	bash "$REPO/scripts/provision-postgres.sh" "${steps[@]}"
}

# The PostgreSQL 17 chroot is downloaded (debootstrap: network-bound) while PostgreSQL 18 builds
# (CPU-bound). Its own session, so that cleanup can stop it whole; the background part's pg17
# step then finds the chroot ready, or waits for it (provision-postgres.sh locks the chroot).
EARLY_PROVISION_LOG=$PGSW_WORK/provision-early.log
EARLY_PROVISION_PID_FILE=$PGSW_WORK/provision-early.pid
start_early_provision() {
	selected pg17 || selected integrations || return 0
	say "beside it: scripts/provision-postgres.sh pg17 (log $EARLY_PROVISION_LOG)"
	setsid bash "$REPO/scripts/provision-postgres.sh" pg17 >"$EARLY_PROVISION_LOG" 2>&1 </dev/null &
	echo "$!" >"$EARLY_PROVISION_PID_FILE"
}
stop_early_provision() {
	local pid
	[ -f "$EARLY_PROVISION_PID_FILE" ] || return 0
	pid=$(cat "$EARLY_PROVISION_PID_FILE")
	rm -f "$EARLY_PROVISION_PID_FILE"
	grep -qa provision-postgres "/proc/$pid/cmdline" 2>/dev/null || return 0
	kill -TERM -- "-$pid" 2>/dev/null || true
}

BG_PROVISION_PID=
BG_PROVISION_LOG=$PGSW_WORK/provision-bg.log

start_bg_provision() {
	local steps
	read -r -a steps <<<"$(provision_bg_steps)"
	[ ${#steps[@]} -gt 0 ] || return 0
	say "in the background: scripts/provision-postgres.sh ${steps[*]} (log $BG_PROVISION_LOG)"
	bash "$REPO/scripts/provision-postgres.sh" "${steps[@]}" >"$BG_PROVISION_LOG" 2>&1 &
	BG_PROVISION_PID=$!
}

# Waits for the background part (in the main shell: only the parent can wait for it), prints
# its log, and records it as the stage provision-bg, timed from the wait.
wait_bg_provision() {
	local t0=$SECONDS rc=0 result=PASS
	banner "stage provision-bg"
	if [ -n "$BG_PROVISION_PID" ]; then
		say "waiting for the background provisioning (pid $BG_PROVISION_PID)"
		wait "$BG_PROVISION_PID" || rc=$?
		BG_PROVISION_PID=
		[ ! -s "$EARLY_PROVISION_LOG" ] || sed 's/^/    (early) /' "$EARLY_PROVISION_LOG"
		sed 's/^/    /' "$BG_PROVISION_LOG"
		if [ "$rc" != 0 ]; then
			warn "background provisioning failed (exit $rc): see above"
			result=FAIL
		fi
	else
		say "nothing was provisioned in the background"
	fi
	NAMES+=(provision-bg) RESULTS+=("$result") SECS+=($((SECONDS - t0)))
	say "stage provision-bg: $result in $((SECONDS - t0))s"
}

# Every PostgreSQL version difference lives in src/pg/compat.hpp (issue 17): a version test
# anywhere else fails the unit stage. (core/cpp_only.hpp tests that postgres.h is NOT
# included, not a version.)
check_version_ifs_in_compat() {
	local found
	found=$(grep -rnE 'PG_VERSION_NUM|#[[:space:]]*(if|elif).*PG_MAJORVERSION' "$SNAPSHOT/src" |
		grep -vE '^[^:]*/src/pg/compat\.hpp:|^[^:]*/src/core/cpp_only\.hpp:' || true)
	[ -z "$found" ] || die "PostgreSQL version tests outside src/pg/compat.hpp:
$found"
	say "version tests: only in src/pg/compat.hpp"
}

stage_unit() {
	if [ ! -f "$SNAPSHOT/CMakeLists.txt" ]; then
		warn "#####################################################################"
		warn "# NO CMakeLists.txt: the unit-test stage is SKIPPED, nothing was tested"
		warn "#####################################################################"
		return "$SKIP_RC"
	fi
	check_version_ifs_in_compat
	local build=$PGSW_WORK/unit/build-core
	fresh_dir "$PGSW_WORK/unit"
	cmake -S "$SNAPSHOT" -B "$build" -DPGSW_WERROR=ON
	cmake --build "$build" -j"$JOBS"
	# --no-tests=error: a build that registers no test must not pass as green.
	ctest --test-dir "$build" --output-on-failure --no-tests=error -j"$JOBS"
}

stage_inject() {
	bash "$SNAPSHOT/test/inject/check_inject.sh"
}

# A private copy of a cached source-built server (~100 MB, a second) in $PGSW_WORK/NAME/pg:
# the test user can reach it (the cache is under root's 700 home) and `make install` never
# touches the shared cache. Prints the copy's folder.
copy_server() { # copy_server PREFIX NAME
	local prefix=$1 dir=$PGSW_WORK/$2
	[ -f "$prefix/.complete" ] || die "PostgreSQL is not provisioned at $prefix"
	{
		fresh_dir "$dir"
		say "staging a private copy of $prefix"
		cp -a -- "$prefix" "$dir/pg"
	} >&2
	echo "$dir"
}

# Build with WERROR=1 and install, as the test user, against the server copy in $1/pg, in
# $1/src (a copy of the snapshot unless the caller made one already).
build_install() { # build_install DIR LABEL
	local dir=$1 label=$2 flavour=release
	[ -d "$dir/src" ] || cp -a "$SNAPSHOT/." "$dir/src"
	[ "$(id -u)" != 0 ] || chown -R "$TEST_USER:" "$dir"
	MAKE_VARS=(PG_CONFIG="$dir/pg/bin/pg_config" WERROR=1)
	grep -q -- '--enable-cassert' <<<"$("$dir/pg/bin/pg_config" --configure)" && flavour=assert
	say "building against $("$dir/pg/bin/pg_config" --version) ($flavour build) as $TEST_USER"
	as_test_user make -C "$dir/src" -j"$JOBS" "${MAKE_VARS[@]}" ||
		die "the build against PostgreSQL $label failed (WERROR=1): see the compiler output above"
	as_test_user make -C "$dir/src" "${MAKE_VARS[@]}" install || die "make install failed"
	check_tick_code_grouped "$dir/src/pg_storage_wait.so"
}

# The sampler's per-tick code is marked PGSW_TICK_PATH (src/core/tick_path.hpp) so that it sits
# in a few pages (a profile put the library's own tick time at cold, page-crossing function
# entries; BENCHMARKS.md section 9).
# A build whose tick functions are spread out (the attribute dropped, a toolchain ignoring it)
# fails here. These six are called across translation units or through a pointer: always there.
check_tick_code_grouped() { # check_tick_code_grouped SO
	local so=$1 addr lo='' hi='' n=0
	while read -r addr; do
		addr=$((16#$addr))
		n=$((n + 1))
		if [ -z "$lo" ] || [ "$addr" -lt "$lo" ]; then lo=$addr; fi
		if [ -z "$hi" ] || [ "$addr" -gt "$hi" ]; then hi=$addr; fi
	done < <(nm -C "$so" | grep -E ' [tT] (pgsw::SamplerClock::tick\(|pgsw::Ring::append\(|pgsw::TickBuilder::(begin|add_sample)\(|pgsw::pg::pg_try\(|pgsw::pg::\(anonymous namespace\)::sampler_main\(\)$)' |
		grep -v 'clone \.' | awk '{print $1}')
	[ "$n" = 6 ] || die "check_tick_code_grouped: found $n of the 6 tick functions in $so"
	[ $((hi - lo)) -le 32768 ] ||
		die "the sampler's tick code spans $((hi - lo)) bytes of $so (over 32 kB): PGSW_TICK_PATH lost?"
	say "the sampler's tick code: within $((hi - lo)) bytes"
}

# The TAP files (PGSW_PROVE_TESTS's, else all) that run on an assert or a release build.
tap_files() { # tap_files assert|release
	local f chosen=()
	for f in ${PGSW_PROVE_TESTS:-$(cd "$SNAPSHOT" && echo test/t/*.pl)}; do
		case " ${RELEASE_TAP_FILES[*]} " in
		*" $f "*) [ "$1" = release ] && chosen+=("$f") ;;
		*) [ "$1" = assert ] && chosen+=("$f") ;;
		esac
	done
	echo "${chosen[*]}"
}

# pg_regress and every TAP file on the assert server copy in DIR; for a MAJOR listed in
# PGSW_RELEASE_ACCURACY the RELEASE_TAP_FILES run on a copy of its release build instead.
run_assert_and_release() { # run_assert_and_release DIR LABEL MAJOR RELEASE_PREFIX
	local dir=$1 label=$2 major=$3 release_prefix=$4 files release_dir
	if [[ " $PGSW_RELEASE_ACCURACY " != *" $major "* ]]; then
		run_installcheck "$dir/src" "$dir/src" as_test_user
		return
	fi
	files=$(tap_files assert)
	if [ -n "$files" ] || [ -z "${PGSW_REGRESS+set}" ] || [ -n "$PGSW_REGRESS" ]; then
		TAP_FILES=$files run_installcheck "$dir/src" "$dir/src" as_test_user
	fi
	files=$(tap_files release)
	[ -n "$files" ] || return 0
	release_dir=$(copy_server "$release_prefix" "$(basename "$dir")-release")
	build_install "$release_dir" "$label"
	PGSW_REGRESS='' TAP_FILES=$files run_installcheck "$release_dir/src" "$release_dir/src" as_test_user
}

# What pg18 runs, on any source-built server: build, install, pg_regress and every TAP test.
test_source_build() { # test_source_build DIR LABEL
	build_install "$1" "$2"
	run_installcheck "$1/src" "$1/src" as_test_user
}

stage_pg18() {
	local dir
	dir=$(copy_server "$PG18_RELEASE_PREFIX" pg18)
	test_source_build "$dir" "$PG18_VERSION"
}

# Objects of another major are never linked: the tree is first built against 18, then made
# against 16 with no make clean (the build stamp must recompile every object); afterwards
# `make clean PG_CONFIG=<16>` must work and leave no object.
stage_pg16() {
	local dir marker stale
	dir=$(copy_server "$PG16_PREFIX" pg16)
	marker=$dir/after-18-build
	[ -f "$PG18_RELEASE_PREFIX/.complete" ] ||
		die "the major-switch check needs PostgreSQL 18 at $PG18_RELEASE_PREFIX"
	cp -a "$SNAPSHOT/." "$dir/src"
	cp -a -- "$PG18_RELEASE_PREFIX" "$dir/pg18" # the test user cannot reach the cache
	[ "$(id -u)" != 0 ] || chown -R "$TEST_USER:" "$dir"
	say "major switch: building against 18 first"
	as_test_user make -s -C "$dir/src" -j"$JOBS" PG_CONFIG="$dir/pg18/bin/pg_config" >/dev/null
	sleep 1 # every object made from here on is strictly newer than the marker
	touch "$marker"
	build_install "$dir" "$PG16_VERSION"
	stale=$(find "$dir/src/src" -name '*.o' ! -newer "$marker")
	[ -z "$stale" ] || die "objects of the 18 build were linked for 16: $stale"
	find "$dir/src" -maxdepth 1 -name pg_storage_wait.so -newer "$marker" | grep -q . ||
		die "pg_storage_wait.so was not relinked for 16"
	say "major switch: every object was rebuilt for 16 without make clean"
	run_assert_and_release "$dir" "$PG16_VERSION" 16 "$PG16_RELEASE_PREFIX"
	as_test_user make -s -C "$dir/src" clean PG_CONFIG="$dir/pg/bin/pg_config" ||
		die "make clean PG_CONFIG=<16> failed"
	stale=$(find "$dir/src" -name '*.o' -o -name '*.so' -o -name .pgsw-build-stamp)
	[ -z "$stale" ] || die "make clean PG_CONFIG=<16> left: $stale"
	say "make clean PG_CONFIG=<16> removed every object"
}

# compat.hpp refuses a major newer than the newest tested unless PGSW_UNTESTED_MAJOR: one file
# compiled against a copy of 19's headers that claims to be 20.
check_untested_major_guard() { # check_untested_major_guard DIR (holding pg/, the 19 server)
	local dir=$1 inc=$1/fake20 out rc=0 flags
	cp -a "$("$dir/pg/bin/pg_config" --includedir-server)/." "$inc"
	sed -i -E 's/^#define PG_VERSION_NUM [0-9]+/#define PG_VERSION_NUM 200000/' "$inc/pg_config.h"
	grep -q '^#define PG_VERSION_NUM 200000' "$inc/pg_config.h" || die "could not fake PostgreSQL 20"
	flags=(-std=c++17 -fsyntax-only -I"$SNAPSHOT/src" -isystem "$inc")
	out=$(g++ "${flags[@]}" "$SNAPSHOT/src/pg/module.cpp" 2>&1) || rc=$?
	[ "$rc" != 0 ] || die "a build against PostgreSQL 20 was not refused (compat.hpp guard)"
	grep -q 'error:.*src/pg/compat.hpp.*PGSW_UNTESTED_MAJOR' <<<"$out" ||
		{ printf '%s\n' "$out" | head -20; die "refused without the compat.hpp #error"; }
	g++ "${flags[@]}" -DPGSW_UNTESTED_MAJOR "$SNAPSHOT/src/pg/module.cpp" ||
		die "PGSW_UNTESTED_MAJOR did not let the build through"
	rm -rf "$inc"
	say "a major newer than the newest tested is refused by compat.hpp, and let through on request"
}

stage_pg19() {
	local dir
	dir=$(copy_server "$PG19_PREFIX" pg19)
	check_untested_major_guard "$dir"
	build_install "$dir" "$PG19_VERSION"
	run_assert_and_release "$dir" "$PG19_VERSION" 19 "$PG19_RELEASE_PREFIX"
}

# The sanitizer runtimes of the compiler that builds the extension, resolved to real files
# (the .so names g++ links against are linker scripts or symlinks on some systems).
sanitizer_runtime() { # sanitizer_runtime asan|ubsan
	local f
	f=$(g++ -print-file-name="lib$1.so")
	[ -e "$f" ] || die "g++ has no lib$1.so (Debian: libasan8 / libubsan1 come with g++)"
	realpath -- "$f"
}

# Replace the private server copy's bin/postgres ($1) by a wrapper that preloads the sanitizer
# runtimes ($2) into every server process, with the options ($3: env assignments). Called again,
# it rewrites the wrapper (the canary's report folder, then the suite's). The real binary moves
# to bin/uninstrumented/postgres, keeping its name: the kernel's process name (comm) stays
# "postgres", which is how pids_under finds a server a test leaked ("postgres.uninstrumented"
# showed as "postgres.uninst", so that check never matched in this stage).
wrap_postgres() {
	local bin=$1 preload=$2 opts=$3 real=${1%/*}/uninstrumented/postgres
	if [ ! -e "$real" ]; then
		mkdir -p -- "${real%/*}"
		mv -- "$bin" "$real"
	fi
	# exec -a keeps argv[0]: the server finds its installation from its own path.
	printf '%s\n' '#!/bin/bash' \
		'# scripts/test.sh sanitize stage: the server is not instrumented, the extension is.' \
		"export LD_PRELOAD=\"$preload\${LD_PRELOAD:+ \$LD_PRELOAD}\" $opts" \
		'exec -a "$0" "${0%/*}/uninstrumented/postgres" "$@"' >"$bin"
	chmod 755 "$bin"
}

# The runtime goes into the server processes only (every postgres the tests start runs
# bin/postgres: pg_regress, pg_ctl, initdb's bootstrap, the TAP framework), first in LD_PRELOAD
# as ASan requires (test/inject's library is appended after it), then libubsan, then
# test/sanitizer/ubsan_log_path.so ($2), without which UBSan ignores its log_path inside the
# server (libasan interposes the call that sets it) and reports only to the server log. Not
# into the client tools: an uninstrumented initdb with ASan preloaded hangs in setlocale()
# (glibc 2.36). Every report goes to a file under $3; UBSan goes on after a report
# (halt_on_error=0) so one run collects all of them; detect_leaks=0: the server frees memory
# contexts at exit, not allocation by allocation.
wrap_postgres_sanitized() { # wrap_postgres_sanitized DIR SHIM LOGS
	local supp=$1/src/test/sanitizer
	wrap_postgres "$1/pg/bin/postgres" \
		"$(sanitizer_runtime asan) $(sanitizer_runtime ubsan) $2" \
		"ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:abort_on_error=1:log_path=$3/asan:suppressions=$supp/asan.supp UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=0:log_path=$3/ubsan:suppressions=$supp/ubsan.supp"
}

# The canary (test/sanitizer/canary.cpp): proof, in every run, that a bug inside a server
# process is reported under the log folder, so that "zero reports" means something. Built with
# the extension's COPT, loaded by path (never installed) into a throwaway server started with
# the wrapped postgres, it commits one heap-buffer-overflow (ASan: abort_on_error ends that
# backend, the postmaster crash-restarts the throwaway server, which is then stopped) and one
# shift by 40 of a 32-bit int (UBSan; -fwrapv, which PGXS adds, does not define it), each in its
# own backend after an in-range call of both (a control: the library loads and runs). Both
# reports must be in $2, which must hold nothing else. ~15 s.
sanitizer_canary() { # sanitizer_canary DIR LOGS
	local dir=$1 logs=$2 c=$1/canary port=54329 lib psql out n start=$SECONDS f
	mkdir -p "$c" "$logs"
	[ "$(id -u)" != 0 ] || chown -R "$TEST_USER:" "$c" "$logs"
	say "sanitizer canary: building test/sanitizer/canary.cpp with the same COPT"
	as_test_user make -s -C "$dir/src/test/sanitizer" "${MAKE_VARS[@]}" ||
		die "the canary build failed: see the compiler output above"
	lib=$dir/src/test/sanitizer/pgsw_canary
	readelf -d "$lib.so" | grep -q 'NEEDED.*libasan' ||
		die "the canary is not linked against libasan: the build ignored COPT"
	TIMEOUT_PREFIX=(timeout -k 10 120)
	as_test_user "$dir/pg/bin/initdb" -D "$c/data" -A trust --no-sync >"$c/initdb.log" 2>&1 ||
		{ show_file "$c/initdb.log" 40; die "initdb with the sanitizer runtimes preloaded failed"; }
	as_test_user "$dir/pg/bin/pg_ctl" -D "$c/data" -l "$c/server.log" -w -o \
		"-c listen_addresses='' -c unix_socket_directories='$c' -c port=$port -c fsync=off" \
		start >/dev/null ||
		{ show_file "$c/server.log" 40; die "the canary's server did not start"; }
	psql=(as_test_user "$dir/pg/bin/psql" -X -At -v ON_ERROR_STOP=1 -h "$c" -p "$port" -d postgres)
	out=$("${psql[@]}" -c "CREATE FUNCTION pgsw_canary_heap_write(int, int) RETURNS int
			AS '$lib', 'pgsw_canary_heap_write' LANGUAGE C STRICT VOLATILE" \
		-c "CREATE FUNCTION pgsw_canary_shift(int) RETURNS int
			AS '$lib', 'pgsw_canary_shift' LANGUAGE C STRICT VOLATILE" \
		-c "SELECT pgsw_canary_heap_write(16, 15), pgsw_canary_shift(4)" 2>&1) || true
	if [ "$(tail -n 1 <<<"$out")" != "120|16" ]; then
		printf '%s\n' "$out"
		canary_failed "$c" "$logs" "the canary did not load or run in the server (in-range calls: expected 120|16)"
	fi
	n=$(find "$logs" -type f | wc -l)
	[ "$n" = 0 ] || canary_failed "$c" "$logs" "$n report file(s) in $logs before the canary's bugs ran"
	"${psql[@]}" -c "SELECT pgsw_canary_shift(40)" >/dev/null 2>&1 || true
	"${psql[@]}" -c "SELECT pgsw_canary_heap_write(16, 16)" >/dev/null 2>&1 || true
	as_test_user "$dir/pg/bin/pg_ctl" -D "$c/data" -m immediate -w stop >/dev/null ||
		warn "pg_ctl stop of the canary's server failed"
	TIMEOUT_PREFIX=()
	[ -z "$(pids_under "$c")" ] || { warn "the canary's server outlived pg_ctl stop"; kill_processes_under "$c"; }
	local asan_ok=0 ubsan_ok=0
	for f in "$logs"/asan.*; do
		[ -f "$f" ] && grep -q 'ERROR: AddressSanitizer: heap-buffer-overflow' "$f" &&
			grep -q 'in pgsw_canary_heap_write' "$f" && asan_ok=1
	done
	for f in "$logs"/ubsan.*; do
		[ -f "$f" ] && grep -q 'runtime error: shift exponent 40 is too large' "$f" &&
			grep -q 'in pgsw_canary_shift' "$f" && ubsan_ok=1
	done
	[ "$asan_ok" = 1 ] || canary_failed "$c" "$logs" "NO ASan heap-buffer-overflow report from the canary in $logs"
	[ "$ubsan_ok" = 1 ] || canary_failed "$c" "$logs" "NO UBSan shift-exponent report from the canary in $logs"
	say "sanitizer canary: ASan heap-buffer-overflow and UBSan shift-exponent reports both caught in $logs ($((SECONDS - start)) s)"
}

canary_failed() { # canary_failed CANARY_DIR LOGS REASON: print what there is, stop the server, fail
	local f
	for f in "$2"/*; do show_file "$f" 20; done
	show_file "$1/server.log" 60
	TIMEOUT_PREFIX=()
	kill_processes_under "$1"
	warn "#####################################################################"
	warn "# sanitizer canary: $3"
	warn "#####################################################################"
	die "the sanitizer runtime is not active in the server: the stage would pass blind"
}

# The extension under ASan + UBSan, the sanitizer runtimes preloaded into the servers; first
# the canary proves that a report from inside the server reaches the log folder.
stage_sanitize() {
	[ -f "$PG18_RELEASE_PREFIX/.complete" ] ||
		die "PostgreSQL $PG18_VERSION (release) is not provisioned at $PG18_RELEASE_PREFIX"
	local dir=$PGSW_WORK/sanitize logs reports f rc=0 shim
	fresh_dir "$dir"
	say "staging a private copy of $PG18_RELEASE_PREFIX"
	cp -a -- "$PG18_RELEASE_PREFIX" "$dir/pg"
	cp -a "$SNAPSHOT/." "$dir/src"
	logs=$dir/sanitizer-logs
	shim=$dir/ubsan_log_path.so
	gcc -O2 -g -Wall -Wextra -Wshadow -Werror -shared -fPIC -o "$shim" \
		"$dir/src/test/sanitizer/ubsan_log_path.c" -ldl ||
		die "building test/sanitizer/ubsan_log_path.c failed"
	[ "$(id -u)" != 0 ] || chown -R "$TEST_USER:" "$dir"
	# COPT is PGXS's hook for extra flags: added to CFLAGS, CXXFLAGS and LDFLAGS (the shared
	# library's link), so every object and the link get the sanitizers and nothing else moves.
	MAKE_VARS=(PG_CONFIG="$dir/pg/bin/pg_config" WERROR=1
		COPT="-fsanitize=address,undefined -fno-omit-frame-pointer")
	wrap_postgres_sanitized "$dir" "$shim" "$dir/sanitizer-canary-logs"
	sanitizer_canary "$dir" "$dir/sanitizer-canary-logs"
	wrap_postgres_sanitized "$dir" "$shim" "$logs"
	mkdir -p "$logs"
	[ "$(id -u)" != 0 ] || chown "$TEST_USER:" "$logs"
	say "building with AddressSanitizer + UBSan against $("$dir/pg/bin/pg_config" --version)"
	as_test_user make -C "$dir/src" -j"$JOBS" "${MAKE_VARS[@]}" ||
		die "the sanitizer build failed: see the compiler output above"
	as_test_user make -C "$dir/src" "${MAKE_VARS[@]}" install || die "make install failed"
	readelf -d "$dir/src/pg_storage_wait.so" | grep -q 'NEEDED.*libasan' ||
		die "pg_storage_wait.so is not linked against libasan: the build ignored COPT"
	say "make installcheck, sanitizer runtime preloaded into the servers; reports to $logs"
	run_installcheck "$dir/src" "$dir/src" as_test_user env PGSW_ACCURACY_TESTS=0 PGSW_SANITIZED=1 ||
		rc=$?
	mapfile -t reports < <(find "$logs" -type f | sort)
	for f in "${reports[@]}"; do show_file "$f" 80; done
	[ ${#reports[@]} -eq 0 ] || die "${#reports[@]} sanitizer report file(s) in $logs"
	[ "$rc" = 0 ] || die "make installcheck failed with the sanitizers loaded"
	say "no sanitizer report"
}

stage_fuzz() {
	local dir=$PGSW_WORK/fuzz
	fresh_dir "$dir"
	bash "$SNAPSHOT/test/fuzz/run.sh" "$dir" "${PGSW_FUZZ_SECONDS:-60}"
}

CHROOT_MOUNTS=(proc dev dev/shm) # mounted in this order, unmounted in reverse
# The chroot is shared by every scripts/test.sh run on the machine (one cache), and two runs
# with different PGSW_WORK may test 17 at once: the bind mounts are held by each run that needs
# them (a file per run in $CHROOT_HOLDERS) and undone by the last one to let go, under a lock.
# (An unconditional unmount at the end of any run once took /proc away from another run's
# pg17 stage mid-test: `ps` in 018 then failed and the restart of the crashed node bailed out.)
CHROOT_HOLDERS=$CHROOT17.mount-holders
CHROOT_HOLDER=$CHROOT_HOLDERS/$(basename "$PGSW_WORK")

chroot_unmount_all() {
	local i m
	for ((i = ${#CHROOT_MOUNTS[@]} - 1; i >= 0; i--)); do
		m=$CHROOT17/${CHROOT_MOUNTS[i]}
		mountpoint -q "$m" 2>/dev/null || continue
		umount "$m" 2>/dev/null || umount -l "$m" || warn "could not unmount $m: unmount it by hand"
	done
}

# A holder whose run is gone (killed with SIGKILL) holds nothing: its pid no longer runs.
chroot_prune_holders() {
	local h
	for h in "$CHROOT_HOLDERS"/*; do
		[ -f "$h" ] || continue
		kill -0 "$(cat "$h")" 2>/dev/null || rm -f "$h"
	done
}

# Let go of the mounts; the last holder unmounts them.
chroot_unmount() {
	[ -d "$CHROOT_HOLDERS" ] || mkdir -p "$CHROOT_HOLDERS"
	(
		flock 9
		rm -f "$CHROOT_HOLDER"
		chroot_prune_holders
		[ -n "$(ls -A "$CHROOT_HOLDERS")" ] || chroot_unmount_all
	) 9>"$CHROOT_HOLDERS.lock"
}

chroot_mount() {
	mkdir -p "$CHROOT_HOLDERS"
	(
		flock 9
		chroot_prune_holders
		echo "$MAIN_PID" >"$CHROOT_HOLDER"
		local m
		for m in "${CHROOT_MOUNTS[@]}"; do
			mkdir -p "$CHROOT17/$m"
			mountpoint -q "$CHROOT17/$m" || mount --bind "/$m" "$CHROOT17/$m"
		done
	) 9>"$CHROOT_HOLDERS.lock"
}

stage_pg17() {
	[ "$(id -u)" = 0 ] || die "the pg17 stage needs root (chroot, bind mounts)"
	[ -f "$CHROOT17/.complete" ] || die "the PostgreSQL 17 chroot is not provisioned at $CHROOT17"
	local inner=$CHROOT_INNER
	local dir=$CHROOT17$inner uid gid
	# Order matters: stop servers before unmounting /proc and /dev under them.
	# shellcheck disable=SC2064 # expand $dir now
	trap "kill_processes_under '$dir'; chroot_unmount" EXIT
	say "bind-mounting /proc /dev /dev/shm into $CHROOT17"
	chroot_mount
	fresh_dir "$dir"
	cp -a "$SNAPSHOT/." "$dir"
	# The chroot's postgres user has its own uid (the host's may differ or not exist).
	uid=$(awk -F: '$1 == "postgres" {print $3}' "$CHROOT17/etc/passwd")
	gid=$(awk -F: '$1 == "postgres" {print $4}' "$CHROOT17/etc/passwd")
	[ -n "$uid" ] || die "no postgres user in $CHROOT17/etc/passwd"
	chown -R "$uid:$gid" "$dir"
	# Debian's 17 is built with LLVM: with_llvm=no skips the clang bitcode for the JIT.
	MAKE_VARS=(PG_CONFIG="$PG17_CONFIG" with_llvm=no WERROR=1)
	say "building against $(chroot "$CHROOT17" "$PG17_CONFIG" --version) (Debian 13 chroot)"
	in_chroot postgres make -C "$inner" -j"$JOBS" "${MAKE_VARS[@]}" ||
		die "the build against PostgreSQL 17 failed (WERROR=1): see the compiler output above"
	in_chroot root make -C "$inner" "${MAKE_VARS[@]}" install || die "make install failed"
	run_installcheck "$inner" "$dir" in_chroot postgres
}

# The volume for real (test/t/013_devices.pl): loop devices with ext4 for the data directory and
# pg_wal, and a blkio cgroup the test user may join and throttle (test/devices_env.sh), torn
# down however the stage ends; and a tiny one filled up for test/t/022_disk_full.pl (the history
# save at shutdown on a full disk). Root only; a machine without the blkio hierarchy skips.
stage_devices() {
	if [ "$(id -u)" != 0 ] || [ ! -d /sys/fs/cgroup/blkio ] || ! command -v losetup >/dev/null; then
		warn "devices: needs root, losetup and the cgroup v1 blkio hierarchy: SKIPPED"
		return "$SKIP_RC"
	fi
	[ -f "$PG18_RELEASE_PREFIX/.complete" ] ||
		die "PostgreSQL $PG18_VERSION (release) is not provisioned at $PG18_RELEASE_PREFIX"
	local dir=$PGSW_WORK/devices env=$PGSW_WORK/devices-env
	# shellcheck disable=SC2064 # expand now
	trap "kill_processes_under '$dir'; bash '$SNAPSHOT/test/devices_env.sh' down '$env'" EXIT
	bash "$SNAPSHOT/test/devices_env.sh" down "$env"
	fresh_dir "$dir"
	cp -a -- "$PG18_RELEASE_PREFIX" "$dir/pg"
	cp -a "$SNAPSHOT/." "$dir/src"
	chown -R "$TEST_USER:" "$dir"
	bash "$SNAPSHOT/test/devices_env.sh" up "$env" "$TEST_USER"
	MAKE_VARS=(PG_CONFIG="$dir/pg/bin/pg_config" WERROR=1 REGRESS= REGRESS_NOT_PRELOADED=
		TAP_TESTS=1 PROVE_TESTS="test/t/013_devices.pl test/t/022_disk_full.pl" PGSW_DEVICES_DIR="$env")
	as_test_user make -C "$dir/src" -j"$JOBS" PG_CONFIG="$dir/pg/bin/pg_config" WERROR=1
	as_test_user make -C "$dir/src" PG_CONFIG="$dir/pg/bin/pg_config" install
	run_installcheck "$dir/src" "$dir/src" as_test_user
}

stage_pg15() {
	[ -x "$PG15_CONFIG" ] || die "$PG15_CONFIG missing (Debian's postgresql-server-dev-15)"
	local dir=$PGSW_WORK/pg15 out rc=0 t0=$SECONDS secs objs
	fresh_dir "$dir"
	cp -a "$SNAPSHOT/." "$dir"
	say "make PG_CONFIG=$PG15_CONFIG: must be refused within seconds"
	out=$(cd "$dir" && timeout 60 make PG_CONFIG="$PG15_CONFIG" 2>&1) || rc=$?
	secs=$((SECONDS - t0))
	printf '%s\n' "$out" | sed 's/^/    | /'
	[ "$rc" != 0 ] || die "make against PostgreSQL 15 SUCCEEDED: the version guard is missing"
	[ "$rc" != 124 ] || die "make against PostgreSQL 15 did not finish within 60 s"
	grep -q 'requires PostgreSQL 16 or later' <<<"$out" ||
		die "make failed (exit $rc) but without the line 'requires PostgreSQL 16 or later'"
	[ "$secs" -le 20 ] || die "the refusal took ${secs}s: it must come before any compiling"
	objs=$(find "$dir" -name '*.o' | head -3)
	[ -z "$objs" ] || die "make compiled objects before refusing: $objs"
	say "refused in ${secs}s with the expected message (make exit $rc)"
	(cd "$dir" && make clean PG_CONFIG="$PG15_CONFIG" >/dev/null) ||
		die "make clean PG_CONFIG=$PG15_CONFIG failed: clean must work with any pg_config"
	say "make clean PG_CONFIG=$PG15_CONFIG works"
	# Issue 17's case: no PG_CONFIG, 15's pg_config first on the PATH (Debian 12's default),
	# and objects of another build lying around: clean must run and remove them, or the next
	# build links objects of another major.
	local stale="$dir/src/core/ring.o $dir/src/pg/module.o $dir/pg_storage_wait.so"
	# shellcheck disable=SC2086
	touch $stale
	(cd "$dir" && PATH="$(dirname "$PG15_CONFIG"):$PATH" make clean >/dev/null) ||
		die "make clean with PostgreSQL 15's pg_config first on the PATH failed"
	objs=$(find "$dir" -name '*.o' -o -name '*.so' | head -3)
	[ -z "$objs" ] || die "make clean (15's pg_config first on the PATH) left: $objs"
	say "make clean with 15's pg_config first on the PATH works and removes the objects"
}

stage_integrations() {
	[ "$(id -u)" = 0 ] || die "the integrations stage needs root (chroot, bind mounts, dpkg)"
	PGSW_WORK=$PGSW_WORK/integrations CHROOT17=$CHROOT17 TEST_USER=$TEST_USER JOBS=$JOBS \
		bash "$SNAPSHOT/integrations/test_integrations.sh" "$SNAPSHOT"
}

# --------------------------------------------------------------------------------------------

NAMES=() RESULTS=() SECS=()
STAGE_PID=

# run_stage NAME: time stage_NAME in a subshell, record PASS / FAIL / SKIP in the tables.
# Always returns 0, and must never be called as an `if`/`||` operand: bash ignores `set -e`
# inside anything run in such a context, subshells included, so a failing build would not
# end its stage.
run_stage() {
	local name=$1 t0=$SECONDS rc=0 result
	banner "stage $name"
	# In the background, so that `wait` (unlike a foreground child) returns at once when this
	# script is interrupted: on_signal then stops the stage instead of waiting for it.
	(
		set -e
		# Children must not inherit the run lock: a leaked server would hold it forever.
		exec {lock_fd}>&-
		"stage_$name"
	) &
	STAGE_PID=$!
	wait "$STAGE_PID" || rc=$?
	STAGE_PID=
	case "$rc" in
	0) result=PASS ;;
	"$SKIP_RC") result=SKIP ;;
	*) result=FAIL ;;
	esac
	NAMES+=("$name") RESULTS+=("$result") SECS+=($((SECONDS - t0)))
	say "stage $name: $result in $((SECONDS - t0))s"
}

last_result() { echo "${RESULTS[${#RESULTS[@]} - 1]}"; }

record_not_run() {
	NAMES+=("$1") RESULTS+=("NOT RUN") SECS+=(0)
}

# Interrupted (Ctrl-C, CI's SIGTERM): stop the running stage's whole process tree (make,
# pg_regress, prove...; servers they started are found by folder in cleanup), give it 15 s to
# run its own EXIT trap, then exit, which runs cleanup.
on_signal() {
	local code=$1 pids i
	trap '' INT TERM HUP
	if [ -n "$STAGE_PID" ] && kill -0 "$STAGE_PID" 2>/dev/null; then
		warn "interrupted: stopping the running stage"
		mapfile -t pids < <(descendants "$STAGE_PID")
		kill -TERM "$STAGE_PID" "${pids[@]}" 2>/dev/null || true
		for ((i = 0; i < 30; i++)); do
			kill -0 "$STAGE_PID" 2>/dev/null || break
			sleep 0.5
		done
		mapfile -t pids < <(descendants "$STAGE_PID")
		kill -KILL "$STAGE_PID" "${pids[@]}" 2>/dev/null || true
	fi
	exit "$code"
}

cleanup() {
	# Safety net for every exit path (the stages clean up after themselves): no server left
	# running from our scratch folders, no bind mount left in the chroot, no provisioning left
	# running in the background.
	if [ -n "$BG_PROVISION_PID" ] && kill -0 "$BG_PROVISION_PID" 2>/dev/null; then
		local pids
		mapfile -t pids < <(descendants "$BG_PROVISION_PID")
		kill -TERM "$BG_PROVISION_PID" "${pids[@]}" 2>/dev/null || true
	fi
	stop_early_provision
	[ -d "$PGSW_WORK" ] && kill_processes_under "$PGSW_WORK"
	if [ "$(id -u)" = 0 ] && [ -f "$CHROOT_HOLDER" ]; then
		kill_processes_under "$CHROOT17$CHROOT_INNER"
		chroot_unmount
	fi
	if [ "$KEEP" = 0 ]; then
		remove_scratch "$PGSW_WORK"
		[ "$(id -u)" != 0 ] || remove_scratch "$CHROOT17$CHROOT_INNER"
	fi
}

summary() {
	local i pass=0 fail=0 skip=0 line
	banner summary
	printf '%-12s %-8s %8s\n' stage result seconds
	for i in "${!NAMES[@]}"; do
		printf '%-12s %-8s %8s\n' "${NAMES[i]}" "${RESULTS[i]}" "${SECS[i]}"
		case "${RESULTS[i]}" in
		PASS) pass=$((pass + 1)) ;;
		FAIL) fail=$((fail + 1)) ;;
		*) skip=$((skip + 1)) ;;
		esac
	done
	if [ "$KEEP" = 1 ]; then
		say "kept scratch folders: $PGSW_WORK"
		[ ! -d "$CHROOT17$CHROOT_INNER" ] || say "kept chroot build folder: $CHROOT17$CHROOT_INNER"
	fi
	line="$pass passed, $fail failed"
	[ "$skip" = 0 ] || line+=", $skip skipped"
	echo "$line"
	[ "$fail" = 0 ]
}

main() {
	parse_args "$@"
	assert_scratch_path "$PGSW_WORK"
	# Stale output from an earlier run must never be mistaken for this one's, and two runs must
	# not share scratch folders: one run at a time per scratch folder.
	mkdir -p "$(dirname "$PGSW_WORK")"
	exec {lock_fd}>"$PGSW_WORK.lock"
	flock -n "$lock_fd" || die "another scripts/test.sh is running (lock $PGSW_WORK.lock)"
	if [ -e "$PGSW_WORK" ] && [ "$(stat -c %u "$PGSW_WORK")" != "$(id -u)" ]; then
		die "$PGSW_WORK exists and is not ours: remove it or set PGSW_WORK"
	fi
	trap cleanup EXIT
	trap 'on_signal 130' INT
	trap 'on_signal 143' TERM
	trap 'on_signal 129' HUP
	mkdir -p "$PGSW_WORK"
	chmod 755 "$PGSW_WORK"
	say "stages: ${SELECTED[*]}; cache $PGSW_CACHE; scratch $PGSW_WORK"
	fresh_dir "$SNAPSHOT"
	copy_tree "$REPO" "$SNAPSHOT"
	say "testing a snapshot of $REPO ($(find "$SNAPSHOT" -type f | wc -l) files)"

	local s
	run_stage provision
	if [ "$(last_result)" = PASS ]; then
		setup_test_user
		say "unprivileged test user: $TEST_USER"
		start_bg_provision
		# No server, no timing: these run while the background part builds.
		for s in unit inject pg15 fuzz; do
			selected "$s" && run_stage "$s"
		done
		wait_bg_provision
		for s in pg18 pg17 pg16 pg19 devices sanitize integrations; do
			selected "$s" && run_stage "$s"
		done
	else
		for s in "${ALL_STAGES[@]}"; do selected "$s" && record_not_run "$s"; done
	fi
	# Clean up before the summary so the "N passed, N failed" line is the last one printed.
	cleanup
	trap - EXIT
	summary
}

main "$@"
