/* SPDX-License-Identifier: Apache-2.0 */
/*
 * printf-style format strings, parsed once and used twice: the compiler
 * checks the arguments of printf/system/cat against the conversions, and the
 * runtime renders ring-buffer records with them. Conversions follow C's
 * printf as bpftrace documents them: flags [-+ #0], width, precision, length
 * modifiers (hh h l ll z j t), and d i u x X o c s p, bpftrace's r (a buf()
 * with non-printable bytes escaped; rx every byte as \xNN, rh as spaced
 * NN), plus %% for '%'.
 */
#ifndef SONDE_PRINTF_FORMAT_H
#define SONDE_PRINTF_FORMAT_H

#include "types.h"
#include "util.h"

/* Widths and precisions above this are refused: a column is never wider,
 * and %2147483647d would write 2 GiB per event. */
#define FORMAT_WIDTH_MAX 4096

struct format_piece {
	bool is_conversion;
	char *text;          /* literal text (escapes already decoded), or the whole "%-08lld" */
	char conversion;     /* 'd', 's', ... for conversions ('r' for %rx and %rh too) */
	int text_offset;     /* where the piece starts in the format, for error carets */
};

struct format_pieces {
	struct format_piece *items;
	int count;
	int conversion_count;
};

/* 0 on success; -1 with *error set (and *error_offset into the format) otherwise. */
int format_parse(const char *format, struct format_pieces *out, char **error, int *error_offset);
void format_pieces_free(struct format_pieces *pieces);
/* Checks that argument i has a type conversion i can print; NULL or an error sentence. */
char *format_check_arg(const struct format_piece *conversion, const struct type *type);

#endif
