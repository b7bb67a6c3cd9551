/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lexer: program text in, one token at a time out.
 *
 * The parser pulls tokens on demand instead of receiving a prepared list,
 * because one part of the language cannot be split into tokens without
 * knowing where we are: a probe specifier such as
 * `uprobe:/usr/lib/libc.so.6:malloc` is raw text full of characters that
 * mean something else inside a block. So the parser calls lex_probe_spec()
 * where a probe is expected and lex_next() everywhere else.
 *
 * A lexer is a small value (a position in the text); copying it and later
 * restoring the copy is how the parser looks more than one token ahead.
 * The lexer never prints and never allocates: a malformed token comes back
 * as TOK_ERROR carrying its message, and the parser reports it when it
 * tries to use it.
 */
#ifndef SONDE_LEX_H
#define SONDE_LEX_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"

enum token_kind {
	TOK_EOF,              /* end of the program text */
	TOK_ERROR,            /* malformed input; message says what is wrong */
	TOK_PROBE_SPEC,       /* raw probe specifier text (lex_probe_spec only) */
	TOK_INT,              /* integer literal: int_value */
	TOK_STRING,           /* "..." as written; lex_string_value() decodes it */
	TOK_IDENT,            /* identifier: builtin or function name, field, type */
	TOK_VAR,              /* $name */
	TOK_POSITIONAL,       /* $N: int_value = N */
	TOK_POSITIONAL_COUNT, /* $# */
	TOK_MAP,              /* @name or @ */

	/* punctuation */
	TOK_LPAREN,           /* ( */
	TOK_RPAREN,           /* ) */
	TOK_LBRACE,           /* { */
	TOK_RBRACE,           /* } */
	TOK_LBRACKET,         /* [ */
	TOK_RBRACKET,         /* ] */
	TOK_COMMA,            /* , */
	TOK_SEMICOLON,        /* ; */
	TOK_COLON,            /* : */
	TOK_QUESTION,         /* ? */
	TOK_DOT,              /* . */
	TOK_DOTDOT,           /* .. */
	TOK_ARROW,            /* -> */
	TOK_PRED_END,         /* a '/' followed by '{': closes a predicate */

	/* operators */
	TOK_PLUS,             /* + */
	TOK_MINUS,            /* - */
	TOK_STAR,             /* * */
	TOK_SLASH,            /* / */
	TOK_PERCENT,          /* % */
	TOK_AMP,              /* & */
	TOK_PIPE,             /* | */
	TOK_CARET,            /* ^ */
	TOK_TILDE,            /* ~ */
	TOK_BANG,             /* ! */
	TOK_LT,               /* < */
	TOK_GT,               /* > */
	TOK_LE,               /* <= */
	TOK_GE,               /* >= */
	TOK_EQ,               /* == */
	TOK_NE,               /* != */
	TOK_SHL,              /* << */
	TOK_SHR,              /* >> */
	TOK_LAND,             /* && */
	TOK_LOR,              /* || */
	TOK_INC,              /* ++ */
	TOK_DEC,              /* -- */
	TOK_ASSIGN,           /* = */
	TOK_ADD_ASSIGN,       /* += */
	TOK_SUB_ASSIGN,       /* -= */
	TOK_MUL_ASSIGN,       /* *= */
	TOK_DIV_ASSIGN,       /* /= */
	TOK_MOD_ASSIGN,       /* %= */
	TOK_AND_ASSIGN,       /* &= */
	TOK_OR_ASSIGN,        /* |= */
	TOK_XOR_ASSIGN,       /* ^= */
	TOK_SHL_ASSIGN,       /* <<= */
	TOK_SHR_ASSIGN,       /* >>= */

	/* keywords */
	TOK_IF,               /* if */
	TOK_ELSE,             /* else */
	TOK_WHILE,            /* while */
	TOK_FOR,              /* for */
	TOK_UNROLL,           /* unroll */
	TOK_BREAK,            /* break */
	TOK_CONTINUE,         /* continue */
	TOK_RETURN,           /* return */
	TOK_LET,              /* let */
	TOK_SIZEOF,           /* sizeof */
	TOK_OFFSETOF,         /* offsetof */
	TOK_STRUCT,           /* struct */
	TOK_UNION,            /* union */
	TOK_ENUM,             /* enum */

	TOK_KIND_COUNT
};

struct token {
	enum token_kind kind;
	struct src_loc loc;     /* length = characters the token covers */
	const char *start;      /* the token's text inside the program */
	int length;             /* bytes of that text */
	uint64_t int_value;     /* TOK_INT, TOK_POSITIONAL */
	char message[80];       /* TOK_ERROR: what is wrong, ready to print */
};

struct lexer {
	const char *text;       /* whole program, NUL-terminated */
	const char *pos;        /* next character to read */
	const char *line_start; /* first character of the current line */
	int line;               /* line of pos, from 1 */
};

void lex_init(struct lexer *lexer, const char *text);

/* The next token of a block, predicate or expression. */
struct token lex_next(struct lexer *lexer);

/*
 * The next token where a probe is expected: skips preamble material
 * (`#!`, `#include` and other preprocessor lines, C struct/union/enum/typedef
 * definitions), then returns TOK_PROBE_SPEC, TOK_EOF, or, when the text
 * cannot start a probe, whatever lex_next() would have returned.
 */
struct token lex_probe_spec(struct lexer *lexer);

/*
 * Decodes a TOK_STRING's escapes into out, which must hold at least
 * token->length bytes; returns the decoded length (no NUL is added).
 */
int lex_string_value(const struct token *token, char *out);

/* "identifier", "integer", "'('", "'+='", "end of input", ... */
const char *lex_kind_name(enum token_kind kind);

/* Describes a token for "found ..." messages: "')'", "identifier 'foo'". */
void lex_describe(const struct token *token, char *out, size_t size);

#endif
