#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# pinmap_run.sh SONDE MODE INSIDE OUTSIDE TOOL [ARGS...]
#
# For BCC's --cgroupmap/--mntnsmap: pins a hash map of 8-byte keys (bpftool,
# in a BPF file system mounted at ./bpffs for the run) holding one id, runs
# `SONDE TOOL --cgroupmap MAP ARGS...` (MODE cgroup) or `... --mntnsmap MAP`
# (MODE mntns), then, once it has attached, the shell command INSIDE where
# the id applies and OUTSIDE where it does not; stops the tool with SIGINT,
# cleans up and prints the tool's stdout (its stderr to stderr).
#   cgroup: the id is a fresh cgroup v2 directory's (its inode number);
#           INSIDE runs in a process moved into it, OUTSIDE stays outside.
#   mntns:  the id is this script's mount namespace (its inode number);
#           INSIDE runs here, OUTSIDE under `unshare -m` (a new namespace).
sonde=$1 mode=$2 inside=$3 outside=$4
shift 4
tool=$1
shift
. "$(dirname "$0")/attach_wait.sh"
mkdir -p bpffs && mount -t bpf bpf bpffs || { echo "pinmap_run.sh: cannot mount a bpf fs" >&2; exit 2; }
map=$PWD/bpffs/ids
bpftool map create "$map" type hash key 8 value 8 entries 16 name sonde_ids || exit 2
if [ "$mode" = cgroup ]; then
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$root" ] || { echo "pinmap_run.sh: no cgroup2 mount" >&2; umount bpffs; exit 2; }
	dir=$root/sonde-map-$tool-$$
	mkdir "$dir" || { umount bpffs; exit 2; }
	id=$(stat -c %i "$dir")
	option=--cgroupmap
else
	id=$(stat -L -c %i /proc/self/ns/mnt)
	option=--mntnsmap
fi
# the key as bpftool takes it: eight bytes, least significant first
key= value=$id
for i in 1 2 3 4 5 6 7 8; do
	key="$key $(printf '%02x' $((value % 256)))"
	value=$((value / 256))
done
bpftool map update pinned "$map" key hex $key value hex 01 00 00 00 00 00 00 00 || exit 2
"$sonde" "$tool" $option "$map" "$@" > map.out 2> map.err &
tracer=$!
attach_wait pinmap_run.sh map.err $tracer
if [ "$mode" = cgroup ]; then
	sh -c 'echo $$ > "$1/cgroup.procs" && exec sh -c "$2"' - "$dir" "$inside"
	sh -c "$outside"
else
	sh -c "$inside"
	unshare -m sh -c "$outside"
fi
sleep "${PINMAP_RUN_SETTLE:-0.5}"
kill -INT $tracer 2>/dev/null
wait $tracer
status=$?
[ "$mode" = cgroup ] && cgroup_drain "$dir"
umount bpffs
cat map.out
cat map.err >&2
exit $status
