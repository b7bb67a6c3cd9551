/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the parser's two files share: the parser state and the token and
 * error helpers of parse.c, and the entry points of parse_preamble.c.
 */
#ifndef SONDE_COMPILER_PARSE_INTERNAL_H
#define SONDE_COMPILER_PARSE_INTERNAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>

#include "compiler/ast.h"
#include "compiler/lex.h"

#define PARSE_MAX_DEPTH 512

struct parser {
	struct lexer lexer;   /* positioned just after tok */
	struct token tok;     /* the current, not yet consumed token */
	struct ast *ast;
	struct diag *diag;
	jmp_buf fail;         /* where the first error returns to */
	int depth;            /* nesting of blocks and expressions */
};

void parse_fail_at(struct parser *p, const struct token *tok, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));
void parse_fail_expected(struct parser *p, const char *what) __attribute__((noreturn));
void parse_enter(struct parser *p);
void parse_leave(struct parser *p);
struct token parse_advance(struct parser *p);
struct token parse_advance_to_probe(struct parser *p);
bool parse_accept(struct parser *p, enum token_kind kind);
struct token parse_expect(struct parser *p, enum token_kind kind, const char *what);
struct token parse_peek(const struct parser *p, int n);
struct node *parse_new(struct parser *p, enum node_kind kind, const struct token *tok);
char *parse_token_text(struct parser *p, const struct token *tok, int skip);
bool parse_is_c_base_word(const struct token *tok);
bool parse_is_record_keyword(enum token_kind kind);
void parse_type_append(struct parser *p, char *buf, size_t size, const char *text,
		       int length);
struct node *parse_string(struct parser *p);
struct node *parse_expression(struct parser *p);
/* The statements of a '{' block up to (not consuming) its '}'; with value,
 * a last expression without ';' goes to *value instead. */
struct node *parse_block_items(struct parser *p, const char *what, struct node **value);
bool parse_is_word(const struct token *tok, const char *word);
struct node *parse_c_definition(struct parser *p);
struct node *parse_map_declaration(struct parser *p);
bool parse_preamble(struct parser *p, int probes_so_far);
/* Expands the macros of ast->macros in the probes (macro.c); 0, or -1 after
 * reporting errors. */
int macro_expand_all(struct ast *ast, struct diag *diag);

#endif
