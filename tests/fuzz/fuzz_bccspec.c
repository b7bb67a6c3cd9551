/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the BCC expressions that argdist and trace take
 * (src/toolkit/bccspec.c): the first line of the input is a signature
 * ("size_t size, int fd"), the rest one expression, translated as if for
 * an entry and for a return probe. Besides crashes and leaks, it checks
 * the promise the generators rely on: a translation that is accepted holds
 * no token that could end the expression it is put in or do anything but
 * read (';', braces, assignments, maps), and an error always points into
 * the specifier. No probe is compiled (no target), so nothing touches the
 * kernel.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lex.h"
#include "toolkit/bccspec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_translation(const char *text)
{
	struct lexer lexer;
	lex_init(&lexer, text);
	for (struct token tok = lex_next(&lexer); tok.kind != TOK_EOF; tok = lex_next(&lexer)) {
		switch (tok.kind) {
		case TOK_ERROR: case TOK_SEMICOLON: case TOK_LBRACE: case TOK_RBRACE: case TOK_MAP:
		case TOK_PRED_END: case TOK_ASSIGN: case TOK_INC: case TOK_DEC: case TOK_RETURN:
			fprintf(stderr, "accepted translation holds %.*s: %s\n", tok.length, tok.start,
				text);
			abort();
		default:
			break;
		}
	}
}

static void translate(const char *spec, size_t offset, const bcc_param_list *params,
		      enum bcc_probe_kind kind)
{
	struct bcc_expr_context context = { spec, params, kind, true, NULL };
	struct bcc_expr_needs needs = { 0 };
	char *error = NULL;
	char *out = bcc_expr_translate(&context, offset, strlen(spec) - offset, &needs, &error);
	if (out)
		check_translation(out);
	else if (!error || !strstr(error, "of the specifier)"))
		abort();  /* every refusal says where */
	free(out);
	free(error);
	bcc_expr_needs_free(&needs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *spec = malloc(size + 1);
	memcpy(spec, data, size);
	spec[size] = '\0';
	size_t length = strlen(spec);  /* a NUL ends it, as on a command line */
	const char *newline = memchr(spec, '\n', length);
	size_t offset = newline ? (size_t)(newline - spec) + 1 : 0;
	bcc_param_list params = { 0 };
	char *error = NULL;
	if (newline && bcc_params_parse(spec, (size_t)(newline - spec), &params, &error) < 0) {
		bcc_params_free(&params);
		free(error);
		free(spec);
		return 0;
	}
	translate(spec, offset, &params, BCC_UPROBE);
	translate(spec, offset, &params, BCC_URETPROBE);
	bcc_params_free(&params);
	free(spec);
	return 0;
}
