#!/usr/bin/env bash
# prove, in two groups (the Makefile sets PROVE to this script; arguments as prove's):
#   1. the TAP files that assert only on what the product does, PGSW_TAP_JOBS at a time;
#   2. then the files marked `# pgsw-tap: alone` one by one, with nothing else running: they
#      compare timings with a quiet machine's truth (accuracy, verdicts under load, device
#      rates), and their own load check turns those checks into TODOs when another test keeps
#      the cores busy.
# Most TAP files spend their time waiting (for ticks, roll-ups, restarts), so group 1 in
# parallel takes about half its sequential time. Exit status: 0 only if every group passed.
set -u

prove=${PGSW_REAL_PROVE:?PGSW_REAL_PROVE: the real prove, set by the Makefile}
jobs=${PGSW_TAP_JOBS:-2}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "PGSW_TAP_JOBS must be a positive integer, not '$jobs'" >&2; exit 2; }

options=() together=() alone=()
for arg in "$@"; do
	if [[ $arg == *.pl && -f $arg ]]; then
		if grep -q '^# pgsw-tap: alone' "$arg"; then alone+=("$arg"); else together+=("$arg"); fi
	else
		options+=("$arg")
	fi
done

rc=0
if [ ${#together[@]} -gt 0 ]; then
	echo "# TAP files that may share the machine, $jobs at a time: ${together[*]}"
	"$prove" "${options[@]}" -j"$jobs" "${together[@]}" || rc=$?
fi
if [ ${#alone[@]} -gt 0 ]; then
	echo "# timing-sensitive TAP files, one at a time: ${alone[*]}"
	"$prove" "${options[@]}" "${alone[@]}" || rc=$?
fi
exit "$rc"
