#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# End-to-end checks of uprobe, uretprobe and usdt on the real kernel (root).
# Builds the test programs (build.sh), runs sonde against them and matches
# the output. Run from the repo root after `make`; prints PASS/FAIL lines
# and "N passed, N failed".
set -u
SONDE=${SONDE:-build/sonde}
OUT=build/uprobe
sh "$(dirname "$0")/build.sh" "$OUT" || { echo "FAIL build"; echo "0 passed, 1 failed"; exit 1; }
passed=0
failed=0

# check NAME PATTERN (grep -E, each line must appear) -- sonde arguments...
check() {
	name=$1
	shift
	patterns=$1
	shift
	output=$(timeout 30 "$SONDE" "$@" 2>&1)
	ok=1
	old_ifs=$IFS
	IFS='|'
	for pattern in $patterns; do
		printf '%s\n' "$output" | grep -Eq -- "$pattern" || ok=0
	done
	IFS=$old_ifs
	if [ $ok = 1 ]; then
		echo "PASS $name"
		passed=$((passed + 1))
	else
		echo "FAIL $name: got:"
		printf '%s\n' "$output" | sed 's/^/    /'
		failed=$((failed + 1))
	fi
}

check "uprobe args, non-PIE" '^0 1000000000000$|^2 1000000000002$' \
	-e "uprobe:$OUT/target:add_numbers { printf(\"%ld %ld\\n\", arg0, arg1); }" -c "$OUT/target 3"
check "uprobe args, PIE" '^0 1000000000000$|^2 1000000000002$' \
	-e "uprobe:$OUT/target-pie:add_numbers { printf(\"%ld %ld\\n\", arg0, arg1); }" -c "$OUT/target-pie 3"
check "uretprobe retval and func" '^negate 1$|^negate 3$' \
	-e "uretprobe:$OUT/target-pie:negate { printf(\"%s %d\\n\", func, (int32)retval); }" -c "$OUT/target-pie 3"
check "uprobe in a shared library" '^uprobe:build/uprobe/libtarget.so:target_lib_mul 2 3$' \
	-e "uprobe:$OUT/libtarget.so:target_lib_mul { printf(\"%s %d %d\\n\", probe, arg0, arg1); }" -c "$OUT/target 3"
check "uprobe wildcard" '@\[uprobe:build/uprobe/target:add_numbers\]: 2|@\[uprobe:build/uprobe/target:negate\]: 2' \
	-e "uprobe:$OUT/target:*e* /probe != \"uprobe:$OUT/target:main\"/ { @[probe] = count(); }" -c "$OUT/target 2"
# negate+2 is the second instruction (mov %edi,%eax is 2 bytes at -O1);
# an offset inside an instruction is not checked (see uprobe.c) and would
# corrupt the traced program.
check "uprobe at func+offset" '^@: 2$' \
	-e "uprobe:$OUT/target:negate+2 { @ = count(); }" -c "$OUT/target 2"
address=$(nm "$OUT/target" | awk '/ T negate$/ { print "0x" $1 }')
check "uprobe at an address" '^negate$' \
	-e "uprobe:$OUT/target:$address { printf(\"%s\\n\", func); exit(); }" -c "$OUT/target 2"
check "uprobe on libc by name" '^@: [1-9]' \
	-e 'uprobe:libc:nanosleep { @ = count(); }' -c "$OUT/target 2"
check "usdt register arguments" '^loop 2 2000000000000$' \
	-e "usdt:$OUT/usdt_target:sonde_test:loop { printf(\"loop %d %ld\\n\", arg0, arg1); }" -c "$OUT/usdt_target 3"
check "usdt constant and rip-relative global" '^42 7$|^42 9$' \
	-e "usdt:$OUT/usdt_target:constant { printf(\"%d %d\\n\", arg0, arg1); }" -c "$OUT/usdt_target 3"
check "usdt signed narrow registers" '^-3 -3 -3$' \
	-e "usdt:$OUT/usdt_target:sonde_test:negative { printf(\"%d %d %d\\n\", arg0, arg1, arg2); }" -c "$OUT/usdt_target 3"
check "usdt semaphore raised while attached" '^guarded 2$|^guarded ran 3 times$' \
	-e "usdt:$OUT/usdt_target:guarded { printf(\"guarded %d\\n\", arg0); }" -c "$OUT/usdt_target 3"
check "usdt string argument" '^guarded-1$' \
	-e "usdt:$OUT/usdt_target:guarded { printf(\"%s\\n\", str(arg1)); }" -c "$OUT/usdt_target 2"
check "list uprobes" '^uprobe:/bin/bash:readline$' -l 'uprobe:/bin/bash:*readline*'
check "list usdt" '^usdt:build/uprobe/usdt_target:sonde_test:guarded$|^usdt:build/uprobe/usdt_target:sonde_test:loop$' \
	-l "usdt:$OUT/usdt_target"
check "missing function" "function 'nosuch' not found in /bin/bash" -e 'uprobe:/bin/bash:nosuch {}'
check "not an ELF file" '/etc/passwd is not an ELF file' -e 'uprobe:/etc/passwd:foo {}'

# -p restricts a uprobe to one process: a second copy of the target runs
# the same code at the same time and must not be counted
"$OUT/target" 30 >/dev/null 2>&1 &
first=$!
"$OUT/target" 30 >/dev/null 2>&1 &
second=$!
sleep 0.2
check "uprobe -p counts only that process" '^mine=[1-9][0-9]* others=0$' \
	-p "$first" -e "BEGIN { @mine = 0; @others = 0; } uprobe:$OUT/target:add_numbers { if (pid == $first) { @mine++; } else { @others++; } } interval:ms:600 { printf(\"mine=%d others=%d\\n\", @mine, @others); clear(@mine); clear(@others); exit(); }"
kill "$first" "$second" 2>/dev/null
wait "$first" "$second" 2>/dev/null

# -p without a binary: the probes of every object the process maps
"$OUT/usdt_target" 100 >/dev/null 2>&1 &
target=$!
sleep 0.2
check "usdt in a process by -p (provider:name)" '^[0-9]+ [0-9]+$' \
	-p "$target" -e 'usdt:sonde_test:loop { printf("%d %ld\n", arg0, arg1); exit(); }'
check "usdt in a process by -p (*:provider:name)" '^[0-9]+$' \
	-p "$target" -e 'usdt:*:sonde_test:loop { printf("%d\n", arg0); exit(); }'
kill "$target" 2>/dev/null
wait "$target" 2>/dev/null

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
