#!/bin/sh
# Fuzzes the compiler for SECONDS (default 300) with libFuzzer, AddressSanitizer
# and UBSan, seeded with the test programs and tests/fuzz/seeds/ (inputs that
# once cost without bound). Needs clang; run from the repo root.
set -eu
SECONDS_TO_RUN=${1:-300}
OUT=build/fuzz
mkdir -p "$OUT/corpus"
SRCS=$(ls src/*/*.c src/*/*/*.c | grep -v '^src/main.c$')
# the generated sources: syscall names, and the embedded tools' table
make build/gen/syscall_names.h build/gen/tool_table.c build/gen/tools.S
clang -std=gnu11 -D_GNU_SOURCE -Isrc -Ibuild/gen -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -o "$OUT/fuzz_compile" tests/fuzz/fuzz_compile.c $SRCS \
	build/gen/tool_table.c build/gen/tools.S -lbpf -lelf -lz -liberty
for f in tests/golden/*.bt tests/diff/*.bt tests/diff/compat/*.bt tests/fuzz/seeds/*; do
	cp "$f" "$OUT/corpus/$(basename "$f")"
done
"$OUT/fuzz_compile" -max_total_time="$SECONDS_TO_RUN" -max_len=2048 -timeout=10 \
	-dict=tests/fuzz/bpftrace.dict "$OUT/corpus"
