#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fuzzes one reader of untrusted input for SECONDS (default 300) with
# libFuzzer, AddressSanitizer and UBSan:
#     sh tests/fuzz/run.sh [NAME] [SECONDS] [libFuzzer options...]
# NAME is a target tests/fuzz/fuzz_NAME.c (default compile, the whole
# compiler). It is seeded with tests/fuzz/seeds-NAME/ (inputs that once cost
# without bound or crashed; the compiler's are tests/fuzz/seeds/ plus the
# test programs) and uses tests/fuzz/NAME.dict when there is one. Needs
# clang; run from the repo root.
set -eu
NAME=compile
case "${1:-}" in
'' | [0-9]*) ;;
*) NAME=$1; shift ;;
esac
SECONDS_TO_RUN=${1:-300}
[ $# -gt 0 ] && shift
OUT=build/fuzz
# the Makefile builds the target with sonde's own libraries
make -s "$OUT/fuzz_$NAME"
CORPUS="$OUT/corpus-$NAME"
mkdir -p "$CORPUS"
if [ "$NAME" = compile ]; then
	SEEDS="tests/golden/*.bt tests/diff/*.bt tests/diff/compat/*.bt tests/fuzz/seeds/*"
	DICT=tests/fuzz/bpftrace.dict
	MAX_LEN=2048
else
	SEEDS="tests/fuzz/seeds-$NAME/*"
	DICT=tests/fuzz/$NAME.dict
	MAX_LEN=4096
fi
for f in $SEEDS; do
	[ -f "$f" ] && cp "$f" "$CORPUS/$(basename "$f")"
done
set --  -max_total_time="$SECONDS_TO_RUN" -max_len=$MAX_LEN -timeout=10 "$@"
[ -f "$DICT" ] && set -- "$@" -dict="$DICT"
exec "$OUT/fuzz_$NAME" "$@" "$CORPUS"
