/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Generated tools: funccount, trace, argdist and stackcount take their
 * probes from the command line (BCC's probe specifiers), so their program
 * cannot be written in advance. Each still has a tools/NAME.bt file (its
 * header, and the part of the program that does not depend on the probes),
 * plus a generator here that writes the rest from the arguments. The
 * toolkit puts the generated text before the file's and compiles the two
 * as one program; `--source` shows it.
 *
 * Adding one = a gen_NAME.c file and a line in the table in generator.c.
 */
#ifndef SONDE_GENERATOR_H
#define SONDE_GENERATOR_H

#include "../common/util.h"
#include "tool.h"

struct tool_generator {
	const char *tool;
	/* Appends the program for run's arguments to *program. 0, or -errno
	 * with *error set to one sentence naming the argument at fault. */
	int (*generate)(const struct tool_run *run, struct strbuf *program, char **error);
};

/* NULL when the tool is written, not generated. */
const struct tool_generator *tool_generator_find(const char *tool);

/* A string as a sonde string literal, quotes included (caller frees). */
char *generator_quote(const char *text);
/* The same without the quotes, appended to out: for text put inside a
 * literal the generator writes around it. */
void generator_escape(struct strbuf *out, const char *text);

int funccount_generate(const struct tool_run *run, struct strbuf *program, char **error);
int trace_generate(const struct tool_run *run, struct strbuf *program, char **error);
int argdist_generate(const struct tool_run *run, struct strbuf *program, char **error);
int stackcount_generate(const struct tool_run *run, struct strbuf *program, char **error);

#endif
