/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the whole compiler: any bytes as a program go
 * through preprocessing, lexing, parsing, semantic analysis, code
 * generation, register allocation and emission. Nothing is loaded into the
 * kernel. Build and run with tests/fuzz/run.sh; crashes, hangs, leaks and
 * sanitizer reports are the findings.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "common/program.h"
#include "common/types.h"
#include "compiler/compiler.h"
#include "kernel/btf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	FILE *sink = fopen("/dev/null", "w");
	struct source source = { .filename = "fuzz", .text = text, .length = size };
	struct diag diag;
	diag_init(&diag, &source, sink);
	char *positional[] = { "1", "text" };
	struct compile_options options = { .max_strlen = 64, .positional = positional,
					   .positional_count = 2 };
	struct program program = { 0 };
	compile_program(&source, &options, &program, &diag);
	compile_free(&program);
	type_free_all();
	btf_forget_types();
	fclose(sink);
	free(text);
	return 0;
}
