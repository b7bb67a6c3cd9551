#!/bin/sh
# Fuzzes the compiler for SECONDS (default 300) with libFuzzer, AddressSanitizer
# and UBSan, seeded with the test programs and tests/fuzz/seeds/ (inputs that
# once cost without bound or crashed). Needs clang; run from the repo root.
# Extra arguments go to libFuzzer (e.g. -rss_limit_mb=1024).
set -eu
SECONDS_TO_RUN=${1:-300}
[ $# -gt 0 ] && shift
OUT=build/fuzz
# the Makefile builds the target with sonde's own libraries
make -s fuzz
mkdir -p "$OUT/corpus"
for f in tests/golden/*.bt tests/diff/*.bt tests/diff/compat/*.bt tests/fuzz/seeds/*; do
	cp "$f" "$OUT/corpus/$(basename "$f")"
done
exec "$OUT/fuzz_compile" -max_total_time="$SECONDS_TO_RUN" -max_len=2048 -timeout=10 \
	-dict=tests/fuzz/bpftrace.dict "$@" "$OUT/corpus"
