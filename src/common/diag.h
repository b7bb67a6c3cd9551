/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Diagnostics: the one place that prints compiler errors.
 *
 * Every phase (lexer, parser, semantic analysis, code generation, loader)
 * reports through diag_error() with a source location; the message comes out
 * as `file:line:col: error: message`, then the source line, then a caret
 * under the column (tildes under the rest of the token when its length is
 * known), like a C compiler.
 */
#ifndef SONDE_DIAG_H
#define SONDE_DIAG_H

#include <stdbool.h>
#include <stdio.h>

/* A position in the program text; line and column count from 1. */
struct src_loc {
	int line;
	int column;
	int length; /* characters to underline; 0 or 1 means a single caret */
};

/* The program being compiled, so messages can quote its lines. */
struct source {
	const char *filename; /* "stdin" for -e programs, as bpftrace does */
	const char *text;     /* whole program, NUL-terminated */
	size_t length;        /* bytes read, when the text came from a file (a NUL before
			       * them is an error); 0 = strlen(text) */
};

/* After this many errors the rest are counted, not printed, and phases stop
 * early (clang's default -ferror-limit): a file of 100,000 bad lines gives
 * one screen and a "too many errors" line, not 100,000 messages. */
#define DIAG_ERRORS_MAX 20

struct diag {
	const struct source *source;
	FILE *out;        /* stderr normally; a memstream in unit tests */
	int error_count;
	/* the first error, for a caller that shows it its own way (a tool
	 * argument checked alone points into the command line, not at a line) */
	struct src_loc first_loc;
	char first_message[200];
};

void diag_init(struct diag *diag, const struct source *source, FILE *out);
void diag_error(struct diag *diag, struct src_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_warning(struct diag *diag, struct src_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Extra information at a place, e.g. a fallback taken: `file:line:col: note:`. */
void diag_note(struct diag *diag, struct src_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* An error that belongs to no particular place (e.g. "no probes"). */
void diag_error_noloc(struct diag *diag, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* True once an error past DIAG_ERRORS_MAX came: time to stop checking. */
bool diag_too_many(const struct diag *diag);

#endif
