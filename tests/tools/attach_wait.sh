# SPDX-License-Identifier: Apache-2.0
# Sourced by cgroup_run.sh and pinmap_run.sh.
# attach_wait NAME STDERR_FILE PID: waits (15 s at most) until the tracer PID
# has written its `Attached` line to STDERR_FILE, or has exited.
attach_wait() {
	tries=0
	until grep -q '^Attached' "$2"; do
		tries=$((tries + 1))
		if [ $tries -gt 150 ] || ! kill -0 "$3" 2>/dev/null; then
			echo "$1: the tool did not attach" >&2
			break
		fi
		sleep 0.1
	done
}

# cgroup_drain DIR: waits (10 s at most) until the cgroup DIR holds no process
# (a background process of a workload may still run), then removes it.
# cgroup files report size 0: read, not test -s.
cgroup_drain() {
	tries=0
	while [ -n "$(cat "$1/cgroup.procs")" ] && [ $tries -lt 100 ]; do
		tries=$((tries + 1))
		sleep 0.1
	done
	rmdir "$1"
}
