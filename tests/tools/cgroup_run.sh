#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cgroup_run.sh SONDE INSIDE OUTSIDE TOOL [ARGS...]
#
# Runs `SONDE TOOL -c DIR ARGS...` for a fresh cgroup v2 directory DIR, then,
# once it has attached, the shell command INSIDE in a process moved into DIR
# and OUTSIDE in one that is not; stops the tool with SIGINT, removes DIR and
# prints the tool's stdout (its stderr to stderr). For the tools' -c/--cgroup
# tests: only what INSIDE did may be reported.
sonde=$1 inside=$2 outside=$3
shift 3
tool=$1
shift
. "$(dirname "$0")/attach_wait.sh"
root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$root" ] || { echo "cgroup_run.sh: no cgroup2 mount" >&2; exit 2; }
dir=$root/sonde-$tool-$$
mkdir "$dir" || exit 2
"$sonde" "$tool" -c "$dir" "$@" > cg.out 2> cg.err &
tracer=$!
attach_wait cgroup_run.sh cg.err $tracer
sh -c 'echo $$ > "$1/cgroup.procs" && exec sh -c "$2"' - "$dir" "$inside"
sh -c "$outside"
sleep "${CGROUP_RUN_SETTLE:-0.5}"
kill -INT $tracer 2>/dev/null
wait $tracer
status=$?
cgroup_drain "$dir"
cat cg.out
cat cg.err >&2
exit $status
