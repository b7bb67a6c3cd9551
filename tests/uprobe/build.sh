#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds the uprobe/usdt test programs into build/uprobe/ (run from the repo
# root, or give the output directory as $1):
#   target       non-PIE executable, linked to libtarget.so (rpath $ORIGIN)
#   target-pie   the same program as a PIE
#   libtarget.so shared library with target_lib_mul
#   usdt_target  PIE with USDT probes, one guarded by a semaphore
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-build/uprobe}
CC=${CC:-cc}
mkdir -p "$out"
CFLAGS="-O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror"
$CC $CFLAGS -fPIC -shared -o "$out/libtarget.so" "$here/libtarget.c"
$CC $CFLAGS -no-pie -fno-pie -o "$out/target" "$here/target.c" \
	-L"$out" -ltarget -Wl,-rpath,'$ORIGIN'
$CC $CFLAGS -fpie -pie -o "$out/target-pie" "$here/target.c" \
	-L"$out" -ltarget -Wl,-rpath,'$ORIGIN'
$CC $CFLAGS -fpie -pie -o "$out/usdt_target" "$here/usdt_target.c" "$here/usdt_guarded.c"
