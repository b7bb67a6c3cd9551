#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# case.sh: runs one tests/vm case inside the guest (run_all.py boots the guest
# with `run-in-vm --writable DIR -- sh case.sh DIR START STOP TRACER ARGS...`).
#
# The generator (`run:`) must run in the guest too, after the tracer has
# attached, so the host's runner cannot start it: this script does what the
# runner does for a host case. It starts TRACER ARGS in the background with
# stdout and stderr going to files in DIR, and then, when DIR/run exists or
# STOP is not "none":
#   START "banner": waits until a line "Attached N probes" (sonde, stderr) or
#                   "Attaching N probes..." (bpftrace, stdout) appears;
#   START seconds:  sleeps that long instead;
# runs DIR/run with sh (its pid in $sonde_pid), and STOP seconds later sends
# SIGINT to the tracer. Finally it waits for the tracer.
#
# DIR is a host directory the guest writes directly, so the host reads the
# results there even if the guest is killed: stdout, stderr, rc (the tracer's
# exit status), run.rc and run.err (the generator's). DIR/stdin, if present,
# is the tracer's stdin.
#
# A background job of a non-interactive shell starts with SIGINT ignored;
# sonde and bpftrace install their own SIGINT handlers, so STOP still works.
dir=$1 start=$2 stop=$3
shift 3

stdin=/dev/null
[ -f "$dir/stdin" ] && stdin=$dir/stdin

"$@" <"$stdin" >"$dir/stdout" 2>"$dir/stderr" &
sonde_pid=$!
export sonde_pid

# Whether the tracer has not exited yet. A zombie still has /proc/PID, so
# look at its state too.
running() {
    state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$sonde_pid/status" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != Z ]
}

attached() {
    grep -Eq '^Attached [0-9]+ probes?$' "$dir/stderr" ||
        grep -Eq '^(Attaching [0-9]+ probes?\.\.\.|\{"type": ?"attached_probes")' "$dir/stdout"
}

if [ -f "$dir/run" ] || [ "$stop" != none ]; then
    if [ "$start" = banner ]; then
        while running && ! attached; do
            sleep 0.1
        done
        # bpftrace prints its banner before it attaches.
        case $(basename "$1") in *bpftrace*) sleep 1 ;; esac
    else
        sleep "$start"
    fi
    if running && [ -f "$dir/run" ]; then
        sh "$dir/run" >/dev/null 2>"$dir/run.err" </dev/null
        echo $? >"$dir/run.rc"
    fi
    if [ "$stop" != none ] && running; then
        sleep "$stop"
        kill -INT "$sonde_pid" 2>/dev/null
    fi
fi

wait "$sonde_pid"
echo $? >"$dir/rc"
