#!/usr/bin/env bash
# Root-side set-up for test/t/013_devices.pl: two loop devices with ext4 (data, wal) and a
# cgroup v1 blkio group the test user may join and whose throttle rules it may write; and for
# test/t/022_disk_full.pl a tiny one (tiny: 64 MB, no blocks reserved for root) that the test
# fills.
#
#   test/devices_env.sh up DIR USER     # prepares DIR (prints it); needs root
#   test/devices_env.sh down DIR        # unmounts, detaches, removes the cgroup (idempotent)
#
# Then run the TAP test as USER with PGSW_DEVICES_DIR=DIR. DIR holds: data/, wal/ and tiny/
# (the mounts, owned by USER), data.dev / wal.dev / tiny.dev (/dev/loopN), *.majmin, cgroup
# (the group's folder).
set -euo pipefail
cmd=${1:?up|down} dir=${2:?DIR}
blkio=/sys/fs/cgroup/blkio

down() {
	local cg
	if [ -f "$dir/cgroup" ] && cg=$(cat "$dir/cgroup") && [ -d "$cg" ]; then
		# Whatever is left in the group (a server a failed test did not stop) goes back to
		# the root group first: a cgroup with tasks cannot be removed.
		while read -r pid; do echo "$pid" >"$blkio/cgroup.procs" 2>/dev/null || true; done <"$cg/cgroup.procs"
		rmdir "$cg" || true
	fi
	for d in data wal tiny; do
		mountpoint -q "$dir/$d" 2>/dev/null && umount "$dir/$d" || true
		[ -f "$dir/$d.dev" ] && losetup -d "$(cat "$dir/$d.dev")" 2>/dev/null || true
		rm -f "$dir/$d.img" "$dir/$d.dev" "$dir/$d.majmin"
	done
	rm -f "$dir/cgroup"
}

# filesystem USER NAME SIZE [mkfs.ext4 options]: DIR/NAME.img on a loop device, ext4, mounted
# on DIR/NAME and owned by USER.
filesystem() {
	local user=$1 d=$2 size=$3 dev
	shift 3
	truncate -s "$size" "$dir/$d.img"
	dev=$(losetup -f --show "$dir/$d.img")
	echo "$dev" >"$dir/$d.dev"
	printf '%d:%d\n' "0x$(stat -c %t "$dev")" "0x$(stat -c %T "$dev")" >"$dir/$d.majmin"
	mkfs.ext4 -q -F "$@" "$dev"
	mkdir -p "$dir/$d"
	mount "$dev" "$dir/$d"
	chown "$user:" "$dir/$d"
}

up() {
	local user=${1:?USER}
	[ "$(id -u)" = 0 ] || { echo "devices_env.sh: needs root" >&2; exit 1; }
	[ -d "$blkio" ] || { echo "devices_env.sh: no cgroup v1 blkio hierarchy at $blkio" >&2; exit 1; }
	mkdir -p "$dir"
	filesystem "$user" data 700M
	filesystem "$user" wal 700M
	filesystem "$user" tiny 64M -m 0
	# Named after the whole path: two runs with different DIRs never share (and remove) a group.
	local cg
	cg="$blkio/pgsw_devices_$(printf %s "$dir" | md5sum | cut -c1-12)"
	mkdir -p "$cg"
	echo "$cg" >"$dir/cgroup"
	chown "$user" "$cg/cgroup.procs" "$cg/tasks" "$cg"/blkio.throttle.*_device
	chown "$user:" "$dir" "$dir"/*.dev "$dir"/*.majmin "$dir/cgroup"
	echo "$dir"
}

case $cmd in
up) shift 2; up "$@" ;;
down) down ;;
*) echo "usage: $0 up DIR USER | down DIR" >&2; exit 2 ;;
esac
