#!/usr/bin/env bash
# The project's one test command (README, CI's .ci/run). On a fresh Debian 12 machine, as root,
# it provisions what it needs and runs every stage:
#
#   scripts/test.sh [--only STAGE[,STAGE...]] [--keep]
#
#   unit   the pure C++ core's unit tests: CMake + ctest, -Werror, on the host
#   inject the latency-injection library's self-test (test/inject/check_inject.sh)
#   pg18   PostgreSQL 18.6 assert build: PGXS build with WERROR=1, install, `make installcheck`
#          (pg_regress on a temporary instance, then the TAP tests, including the
#          latency-injection accuracy tests; PGSW_ACCURACY_TESTS=0 leaves those out)
#   pg17   the same against Debian 13's PostgreSQL 17 inside a chroot
#   pg15   building against PostgreSQL 15 must be refused at once with a clear message
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
# default 1800), JOBS (default nproc).
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
PG18_PREFIX=$PGSW_CACHE/pg-$PG18_VERSION-assert
CHROOT17=$PGSW_CACHE/chroot-trixie-pg17
PG17_CONFIG=/usr/lib/postgresql/17/bin/pg_config # inside the chroot
PG15_CONFIG=/usr/lib/postgresql/15/bin/pg_config
# Scratch space lives in /tmp, not in the cache: root's home is mode 700, so the unprivileged
# test user could not reach a build folder (or a server binary) under it.
PGSW_WORK=${PGSW_WORK:-/tmp/pg_storage_wait-test.$(id -un)}
TEST_TIMEOUT=${PGSW_TEST_TIMEOUT:-1800}
JOBS=${JOBS:-$(nproc)}
ALL_STAGES=(unit inject pg18 pg17 pg15)
# Every stage tests this one copy of the source tree, taken when the run starts: a tree that
# is being edited meanwhile must not give each stage a different version.
SNAPSHOT=$PGSW_WORK/snapshot
SKIP_RC=77 # a stage function returns this to say "skipped" (the automake convention)
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
	for v in PG_TEST_EXTRA PG_TEST_TIMEOUT_DEFAULT PG_TEST_NOCLEAN PGSW_ACCURACY_TESTS \
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
	say "make installcheck (pg_regress, then TAP) in $dir, timeout ${TEST_TIMEOUT}s"
	TIMEOUT_PREFIX=(timeout -k 30 "$TEST_TIMEOUT")
	"$@" make -C "$dir" "${MAKE_VARS[@]}" installcheck 2>&1 | tee "$out" || rc=$?
	# A failing pg_regress stops make before the TAP tests. Run the whole target again with
	# make -i (go on after failing commands, whatever the Makefile's recipe looks like), so one
	# CI run reports both; its exit status means nothing, prove's "Result:" line does.
	if [ "$rc" != 0 ] && [ "$rc" != 124 ] && ! grep -q '^Result: ' "$out" &&
		[ -n "$(find_regress_files "$hostdir" regression.diffs)" ] &&
		grep -q '^TAP_TESTS *= *1' "$hostdir/Makefile"; then
		say "pg_regress failed (make exit $rc), so make skipped the TAP tests: running them too (make -i)"
		"$@" make -i -C "$dir" "${MAKE_VARS[@]}" installcheck 2>&1 | tee "$out" || true
		if grep -q '^Result: PASS' "$out"; then
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

stage_provision() {
	local steps=(deps)
	selected pg18 && steps+=(pg18-assert)
	selected pg17 && steps+=(pg17)
	say "scripts/provision-postgres.sh ${steps[*]} (first run on a fresh machine: ~10 minutes)"
	bash "$REPO/scripts/provision-postgres.sh" "${steps[@]}"
}

stage_unit() {
	if [ ! -f "$SNAPSHOT/CMakeLists.txt" ]; then
		warn "#####################################################################"
		warn "# NO CMakeLists.txt: the unit-test stage is SKIPPED, nothing was tested"
		warn "#####################################################################"
		return "$SKIP_RC"
	fi
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

stage_pg18() {
	[ -f "$PG18_PREFIX/.complete" ] ||
		die "PostgreSQL $PG18_VERSION (assert) is not provisioned at $PG18_PREFIX"
	local dir=$PGSW_WORK/pg18
	fresh_dir "$dir"
	# A private copy of the cached server (~100 MB, a second): the test user can reach it (the
	# cache is under root's 700 home) and `make install` never touches the shared cache.
	say "staging a private copy of $PG18_PREFIX"
	cp -a -- "$PG18_PREFIX" "$dir/pg"
	cp -a "$SNAPSHOT/." "$dir/src"
	[ "$(id -u)" != 0 ] || chown -R "$TEST_USER:" "$dir"
	MAKE_VARS=(PG_CONFIG="$dir/pg/bin/pg_config" WERROR=1)
	say "building against $("$dir/pg/bin/pg_config" --version) (assert build) as $TEST_USER"
	as_test_user make -C "$dir/src" -j"$JOBS" "${MAKE_VARS[@]}" ||
		die "the build against PostgreSQL 18 failed (WERROR=1): see the compiler output above"
	as_test_user make -C "$dir/src" "${MAKE_VARS[@]}" install || die "make install failed"
	run_installcheck "$dir/src" "$dir/src" as_test_user
}

CHROOT_MOUNTS=(proc dev dev/shm) # mounted in this order, unmounted in reverse

chroot_unmount() {
	local i m
	for ((i = ${#CHROOT_MOUNTS[@]} - 1; i >= 0; i--)); do
		m=$CHROOT17/${CHROOT_MOUNTS[i]}
		mountpoint -q "$m" 2>/dev/null || continue
		umount "$m" 2>/dev/null || umount -l "$m" || warn "could not unmount $m: unmount it by hand"
	done
}

chroot_mount() {
	chroot_unmount # a run killed with SIGKILL may have left them mounted
	local m
	for m in "${CHROOT_MOUNTS[@]}"; do
		mkdir -p "$CHROOT17/$m"
		mount --bind "/$m" "$CHROOT17/$m"
	done
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
	# running from our scratch folders, no bind mount left in the chroot.
	[ -d "$PGSW_WORK" ] && kill_processes_under "$PGSW_WORK"
	if [ "$(id -u)" = 0 ] && [ -d "$CHROOT17" ]; then
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
	printf '%-10s %-8s %8s\n' stage result seconds
	for i in "${!NAMES[@]}"; do
		printf '%-10s %-8s %8s\n' "${NAMES[i]}" "${RESULTS[i]}" "${SECS[i]}"
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
		for s in "${ALL_STAGES[@]}"; do
			selected "$s" || continue
			run_stage "$s"
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
