# shellcheck shell=bash
# Shared helpers for the project's bash scripts (sourced, never run).
#
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# Everything here is careful about three things the tests depend on: scratch folders are only
# ever removed when they are ours, servers started from them never outlive a run, and log
# output stays readable in a CI log (long files are cut, with a note saying so).

PGSW_TAG=${PGSW_TAG:-pgsw}

say() { printf '[%s %(%H:%M:%S)T] %s\n' "$PGSW_TAG" -1 "$*"; }
warn() { printf '[%s %(%H:%M:%S)T] WARNING: %s\n' "$PGSW_TAG" -1 "$*" >&2; }
die() {
	printf '[%s] ERROR: %s\n' "$PGSW_TAG" "$*" >&2
	exit 1
}
banner() {
	printf '\n==================== %s ====================\n' "$*"
}

# A path we may rm -rf: absolute, at least two levels deep, no "..", and not a mount point.
# Guards against an empty or mistyped variable turning a cleanup into `rm -rf /`.
assert_scratch_path() {
	local p=$1
	case "$p" in
	/*/*) ;;
	*) die "refusing to use '$p' as a scratch folder: need an absolute path at least two levels deep" ;;
	esac
	case "/$p/" in
	*/../* | */./*) die "refusing to use '$p' as a scratch folder: it contains . or .." ;;
	esac
}

# Remove a scratch folder. --one-file-system: never descend into something mounted inside it
# (a leaked bind mount of /dev or /proc must not be emptied through it).
remove_scratch() {
	local p=$1
	assert_scratch_path "$p"
	[ -e "$p" ] || return 0
	rm -rf --one-file-system -- "$p"
}

# The pids of processes whose working directory lies under $1 (only those named $2, e.g.
# postgres, when given), one per line. A postmaster chdirs into its data directory and its
# children inherit that; make, pg_regress, prove and the TAP scripts run in the build folder.
# So this finds exactly what one scratch folder's tests started, also inside a chroot (/proc
# shows host paths), and nothing else on the machine.
pids_under() {
	local dir p cwd
	dir=$(realpath -m -- "$1")
	for p in /proc/[0-9]*; do
		case "${p#/proc/}" in "$$" | "$BASHPID") continue ;; esac
		[ -z "${2:-}" ] || [ "$(cat "$p/comm" 2>/dev/null)" = "$2" ] || continue
		cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
		case "$cwd/" in "$dir"/*) echo "${p#/proc/}" ;; esac
	done
}

# Stop everything pids_under $1 finds: postgres with SIGQUIT (immediate shutdown, which also
# lets the postmaster release shared memory), the rest (make, prove, perl from a run that was
# killed: `timeout` puts them in a process group of their own, so they outlive a kill of the
# script's group) with SIGTERM; SIGKILL for what is left after 10 seconds.
kill_processes_under() {
	local pids pg=() other=() alive p i
	mapfile -t pids < <(pids_under "$1")
	[ ${#pids[@]} -gt 0 ] || return 0
	for p in "${pids[@]}"; do
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = postgres ]; then pg+=("$p"); else other+=("$p"); fi
	done
	warn "stopping leftover processes under $1: ${#pg[@]} postgres, ${#other[@]} other${other[*]:+ ($(
		for p in "${other[@]}"; do cat "/proc/$p/comm" 2>/dev/null; done | sort -u | tr '\n' ' '
	))}"
	[ ${#other[@]} -eq 0 ] || kill -TERM "${other[@]}" 2>/dev/null || true
	[ ${#pg[@]} -eq 0 ] || kill -QUIT "${pg[@]}" 2>/dev/null || true
	for ((i = 0; i < 20; i++)); do
		alive=()
		for p in "${pids[@]}"; do [ -d "/proc/$p" ] && alive+=("$p"); done
		[ ${#alive[@]} -gt 0 ] || return 0
		sleep 0.5
	done
	warn "still alive after 10 s, sending SIGKILL: ${alive[*]}"
	kill -KILL "${alive[@]}" 2>/dev/null || true
}

# All descendants of process $1, one pid per line, children before grandchildren.
descendants() {
	local c
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}

# Untracked files that are build or test output, not source: never copied into a build tree.
PGSW_ARTEFACTS_RE='(^|/)(build|tmp_check[^/]*|results|log|\.deps)/|\.(o|so|bc|a|gcda|gcno)$|(^|/)regression\.(diffs|out)$'

# Copy the project's source tree from $1 into $2 (created if missing): the files git knows
# (tracked, plus untracked ones that .gitignore does not exclude, minus build output), so
# uncommitted work is tested too. Without git (a tarball), copy everything but build output.
copy_tree() {
	local src=$1 dest=$2
	mkdir -p -- "$dest"
	if git -c safe.directory="$src" -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
		{
			git -c safe.directory="$src" -C "$src" ls-files -z --cached
			git -c safe.directory="$src" -C "$src" ls-files -z --others --exclude-standard |
				{ grep -zvE "$PGSW_ARTEFACTS_RE" || true; }
		} | _existing_only "$src" |
			tar -C "$src" --null --no-recursion -T - -cf - | tar -C "$dest" -xf -
	else
		tar -C "$src" --exclude=.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
			--exclude='tmp_check*' --exclude=results --exclude=build -cf - . | tar -C "$dest" -xf -
	fi
}
# Drop NUL-separated paths (relative to $1) that no longer exist: a tracked file deleted in
# the work tree is still listed by `git ls-files --cached`.
_existing_only() {
	local f
	while IFS= read -r -d '' f; do
		if [ -e "$1/$f" ] || [ -L "$1/$f" ]; then printf '%s\0' "$f"; fi
	done
}

# Print a file for a CI log, cut to its last $2 lines (default 200) with a note when cut.
show_file() {
	local f=$1 max=${2:-200} n
	[ -f "$f" ] || return 0
	n=$(wc -l <"$f")
	printf '\n----- %s (%s lines%s) -----\n' "$f" "$n" "$([ "$n" -gt "$max" ] && echo ", last $max shown")"
	tail -n "$max" -- "$f"
	printf -- '----- end of %s -----\n' "$f"
}

# Files named $2 that pg_regress wrote under build folder $1: its output folder is the build
# folder or any --outputdir the Makefile gives (results_*/ and the like), never the TAP tree.
find_regress_files() {
	find "$1" -maxdepth 3 -path "$1/tmp_check" -prune -o -type f -name "$2" -print 2>/dev/null | sort
}

# After a failed `make installcheck` in build folder $1: what went wrong, from every place
# pg_regress and the TAP framework write to. $2=0 leaves out the TAP logs (the TAP tests
# passed: their transcripts would only bury the pg_regress failure).
print_failure_logs() {
	local d=$1 tap=${2:-1} f found=0 files
	banner "failure details from $d"
	mapfile -t files < <(find_regress_files "$d" regression.diffs)
	for f in "${files[@]}"; do
		show_file "$f" 400
		found=1
	done
	# pg_regress --temp-instance writes initdb.log and postmaster.log to <outputdir>/log.
	mapfile -t files < <(find_regress_files "$d" postmaster.log)
	for f in "${files[@]}"; do
		show_file "$f" 150
		found=1
	done
	# initdb's transcript only matters when initdb itself failed (no server log then).
	mapfile -t files < <(find_regress_files "$d" initdb.log)
	for f in "${files[@]}"; do
		[ -f "${f%initdb.log}postmaster.log" ] || { show_file "$f" 60; found=1; }
	done
	if [ "$tap" = 1 ]; then
		# TAP: regress_log_<test> is each test's transcript; <test>_<node>.log a server's log.
		for f in "$d"/tmp_check/log/regress_log_*; do
			[ -f "$f" ] && { show_file "$f" 200; found=1; }
		done
		for f in "$d"/tmp_check/log/*.log; do
			[ -f "$f" ] && { show_file "$f" 100; found=1; }
		done
	fi
	[ "$found" = 1 ] || say "no regression.diffs or server/TAP logs under $d: the failure is in the output above"
}
