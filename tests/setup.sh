#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Prepares a Debian 12 machine for building and testing sonde.
# Idempotent: installs only the packages that are missing and mounts tracefs
# (and debugfs, for kernels that expose tracing only under it) if needed.
# Prints one line for everything it does; fast when there is nothing to do.
set -eu

PACKAGES="build-essential linux-libc-dev libbpf-dev libelf-dev zlib1g-dev libssl-dev libcrypt-dev bpftool bpftrace python3 systemtap-sdt-dev openssl libbpf-tools libiberty-dev g++ nodejs chromium prometheus curl man-db clang libclang-rt-14-dev xfsprogs btrfs-progs strace"

if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi

missing=
for pkg in $PACKAGES; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
	if [ "$status" != "installed" ]; then
		missing="$missing $pkg"
	fi
done

if [ -n "$missing" ]; then
	echo "setup: installing missing packages:$missing"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -q
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -q $missing
else
	echo "setup: all packages present"
fi

is_mounted() {
	awk -v dir="$1" '$2 == dir { found = 1 } END { exit !found }' /proc/mounts
}

if ! is_mounted /sys/kernel/tracing; then
	echo "setup: mounting tracefs at /sys/kernel/tracing"
	$SUDO mount -t tracefs nodev /sys/kernel/tracing
fi

# Old kernels and some tools still look under debugfs/tracing.
if [ ! -d /sys/kernel/tracing/events ] && ! is_mounted /sys/kernel/debug; then
	echo "setup: mounting debugfs at /sys/kernel/debug"
	$SUDO mount -t debugfs nodev /sys/kernel/debug
fi

echo "setup: done"
