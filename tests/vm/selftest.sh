#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Checks that tests/vm/run-in-vm gives a guest in which kprobes work.
#
# Each check boots the guest once (about 5 s under TCG) and prints
# PASS/FAIL/SKIP, its name and how long it took; the last line is
# "N passed, N failed, N skipped" and the exit status is 1 if anything failed.
#
#   round-trip     stdout, stderr, exit status, arguments, cwd and environment
#                  come back unchanged
#   guest kernel   one boot runs the kernel checks (uname -r is 6.1, the kprobe
#                  PMU exists, BTF is in sysfs, a kprobe can be made and
#                  removed through tracefs) and reports each on its own line
#   timeout        a command that outlives --timeout is killed, exit 124
#   bpftrace ...   only if bpftrace is on the host: BPF kprobes, kretprobes,
#                  fentry and fexit attach and fire in the guest
set -u

here=$(cd "$(dirname "$0")" && pwd)
vm=$here/run-in-vm
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0 skipped=0

now() { date +%s.%N; }
elapsed() { awk -v from="$1" -v to="$(now)" 'BEGIN { printf "%.1fs", to - from }'; }

pass() { echo "PASS $1${2:+ ($2)}"; passed=$((passed + 1)); }
skip() { echo "SKIP $1: $2"; skipped=$((skipped + 1)); }
fail() {
    echo "FAIL $1${3:+ ($3)}"
    echo "$2" | sed 's/^/    /'
    failed=$((failed + 1))
}

# in_vm NAME [run-in-vm options] -- COMMAND...: runs it, leaving $rc, $out,
# $err and $took (which the checks below compare).
in_vm() {
    local name=$1 start
    shift
    start=$(now)
    "$vm" "$@" >"$work/$name.out" 2>"$work/$name.err"
    rc=$?
    took=$(elapsed "$start")
    out=$(cat "$work/$name.out")
    err=$(cat "$work/$name.err")
}

details() {
    printf 'exit status: %s\n--- stdout:\n%s\n--- stderr:\n%s\n' "$rc" "$out" "$err"
}

# --- round-trip: quoting, cwd, environment, both streams, exit status
cd "$work" || exit 1
mkdir "dir with space" && cd "dir with space" || exit 1
SONDE_VM_SELFTEST="a'b \$c" in_vm roundtrip -- \
    sh -c 'pwd; printf "<%s>" "$@"; echo; echo "$SONDE_VM_SELFTEST"; echo to-stderr >&2; exit 7' \
    sh 'two words' "it's" '$HOME' ''
want_out="$work/dir with space
<two words><it's><\$HOME><>
a'b \$c"
if [ "$rc" = 7 ] && [ "$out" = "$want_out" ] && [ "$err" = to-stderr ]; then
    pass round-trip "$took"
else
    fail round-trip "$(details)
--- expected stdout:
$want_out"
fi
cd "$here" || exit 1

# --- guest kernel: every line the guest prints is "ok NAME" or "not ok NAME: why"
guest_checks='
check() { name=$1; shift; if "$@"; then echo "ok $name"; else echo "not ok $name: $why"; fi; }
kernel_is_6_1() { why="uname -r is $(uname -r)"; case $(uname -r) in 6.1.*) ;; *) false ;; esac; }
kprobe_pmu() { why="no /sys/bus/event_source/devices/kprobe/type"; test -r /sys/bus/event_source/devices/kprobe/type; }
btf() { why="no /sys/kernel/btf/vmlinux"; test -s /sys/kernel/btf/vmlinux; }
tracefs_kprobe() {
    ev=/sys/kernel/tracing/kprobe_events
    why="could not create test_probe in $ev"
    echo "p:test_probe do_sys_openat2" >$ev || return 1
    grep -q test_probe $ev || return 1
    why="could not remove test_probe from $ev"
    echo "-:test_probe" >>$ev || return 1
    ! grep -q test_probe $ev
}
check kernel-6.1 kernel_is_6_1
check kprobe-pmu kprobe_pmu
check btf btf
check tracefs-kprobe tracefs_kprobe
'
in_vm guest -- sh -c "$guest_checks"
if [ "$rc" != 0 ] || [ -z "$out" ]; then
    fail "guest kernel" "$(details)" "$took"
else
    while read -r status rest; do
        case $status in
            ok) pass "guest: $rest" ;;
            *) fail "guest: ${rest#ok }" "" ;;
        esac
    done <<<"$out"
    echo "     (guest kernel checks: one boot, $took)"
fi

# --- timeout: QEMU is killed and the status is 124
in_vm timeout --timeout 20 -- sleep 1000
if [ "$rc" = 124 ]; then
    pass timeout "$took"
else
    fail timeout "$(details)" "$took"
fi

# --- bpftrace: BPF programs on kprobes (and friends) in the guest
if ! command -v bpftrace >/dev/null; then
    skip "bpftrace kprobe" "no bpftrace on the host"
    skip "bpftrace kretprobe/kfunc/kretfunc" "no bpftrace on the host"
else
    in_vm bpftrace-kprobe -- bpftrace -e 'kprobe:do_sys_openat2 { @ = count(); } interval:s:1 { exit(); }'
    if [ "$rc" = 0 ] && grep -q '^Attaching 2 probes' <<<"$out" && grep -q '^@: [0-9]' <<<"$out"; then
        pass "bpftrace kprobe" "$took"
    else
        fail "bpftrace kprobe" "$(details)" "$took"
    fi

    # -c runs the opener after the probes are attached; every kind must count it.
    prog='kprobe:do_sys_openat2 /pid == cpid/ { @kprobe = count(); }
          kretprobe:do_sys_openat2 /pid == cpid/ { @kretprobe = count(); }
          kfunc:do_sys_openat2 /pid == cpid/ { @kfunc = count(); }
          kretfunc:do_sys_openat2 /pid == cpid/ { @kretfunc = count(); }'
    in_vm bpftrace-more -- bpftrace -e "$prog" -c '/bin/cat /etc/hostname'
    counted=$(grep -cE '^@(kprobe|kretprobe|kfunc|kretfunc): [1-9]' <<<"$out")
    if [ "$rc" = 0 ] && [ "$counted" = 4 ]; then
        pass "bpftrace kretprobe/kfunc/kretfunc" "$took"
    else
        fail "bpftrace kretprobe/kfunc/kretfunc" "$(details)" "$took"
    fi
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
