/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lexer: turns program text into tokens for parse.c.
 *
 * Input is the whole NUL-terminated program; output is one struct token per
 * call, pointing back into the text (nothing is copied or allocated). Two
 * entry points exist because the language has two lexical modes:
 *
 *  - lex_probe_spec(), used where an action block may start. Probe
 *    specifiers are raw text (`uprobe:/bin/bash:readline`,
 *    `kprobe:vfs_*`, `interval:s:1`) that no ordinary token grammar
 *    describes, so they are taken as a run of characters up to whitespace,
 *    ',' or '{' (or a few characters no probe contains, such as ';'). A '/' belongs to the specifier only after its first ':'
 *    (paths follow the provider name), so `BEGIN/pid == 1/` still starts a
 *    predicate. This mode also steps over the preamble that bpftrace
 *    scripts carry: `#!`, `#include`/`#ifndef` lines. C struct, union,
 *    enum and typedef definitions and `let @m = ...` map declarations
 *    there come back as ordinary tokens (`struct`, `let`, ...) for the
 *    parser.
 *
 *  - lex_next(), used everywhere else: identifiers, $variables, @maps,
 *    numbers, strings and C operators.
 *
 * One token needs a peek at its right-hand context: a '/' whose next
 * non-blank character is '{' cannot be a division (no operand can start
 * with '{'), so it is returned as TOK_PRED_END and the parser can end a
 * predicate without guessing.
 *
 * Errors are tokens too (TOK_ERROR with a message and the location of the
 * offending text), which keeps the lexer free of side effects so the parser
 * can copy a struct lexer, look ahead, and rewind.
 */
#include "compiler/lex.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void lex_init(struct lexer *lexer, const char *text)
{
	lexer->text = text;
	lexer->pos = text;
	lexer->line_start = text;
	lexer->line = 1;
}

static bool lex_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool lex_is_ident_start(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool lex_is_ident_char(char c)
{
	return lex_is_ident_start(c) || lex_is_digit(c);
}

static bool lex_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int lex_hex_digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Moves past one character, keeping the line count. */
static void lex_advance(struct lexer *lexer)
{
	if (*lexer->pos == '\0')
		return;
	if (*lexer->pos == '\n') {
		lexer->line++;
		lexer->line_start = lexer->pos + 1;
	}
	lexer->pos++;
}

static struct src_loc lex_loc_here(const struct lexer *lexer)
{
	struct src_loc loc;

	loc.line = lexer->line;
	loc.column = (int)(lexer->pos - lexer->line_start) + 1;
	loc.length = 1;
	return loc;
}

/* Starts a token at the current position; the caller sets the end. */
static struct token lex_begin(const struct lexer *lexer, enum token_kind kind)
{
	struct token token;

	memset(&token, 0, sizeof(token));
	token.kind = kind;
	token.loc = lex_loc_here(lexer);
	token.start = lexer->pos;
	return token;
}

/* Ends a token that started on the current line at the current position. */
static struct token lex_finish(const struct lexer *lexer, struct token token)
{
	token.length = (int)(lexer->pos - token.start);
	token.loc.length = token.length > 0 ? token.length : 1;
	return token;
}

static struct token lex_error(struct token token, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static struct token lex_error(struct token token, const char *fmt, ...)
{
	va_list ap;

	token.kind = TOK_ERROR;
	va_start(ap, fmt);
	vsnprintf(token.message, sizeof(token.message), fmt, ap);
	va_end(ap);
	return token;
}

/*
 * Skips blanks and comments. Returns false, with *error filled in, for a
 * block comment that never ends (the lexer then sits at end of input).
 */
static bool lex_skip_space(struct lexer *lexer, struct token *error)
{
	for (;;) {
		char c = *lexer->pos;

		if (lex_is_space(c)) {
			lex_advance(lexer);
		} else if (c == '/' && lexer->pos[1] == '/') {
			while (*lexer->pos && *lexer->pos != '\n')
				lex_advance(lexer);
		} else if (c == '/' && lexer->pos[1] == '*') {
			struct token start = lex_begin(lexer, TOK_ERROR);
			const char *end = strstr(lexer->pos + 2, "*/");

			start.length = 2;
			start.loc.length = 2;
			if (!end) {
				while (*lexer->pos)
					lex_advance(lexer);
				*error = lex_error(start, "unterminated comment");
				return false;
			}
			while (lexer->pos < end + 2)
				lex_advance(lexer);
		} else {
			return true;
		}
	}
}

/* Where the next token would start, without moving the lexer. */
static const char *lex_peek_past_space(const struct lexer *lexer)
{
	struct lexer probe = *lexer;
	struct token ignored;

	lex_skip_space(&probe, &ignored);
	return probe.pos;
}

/* ---- numbers ---- */

/* Accepts the C integer suffixes bpftrace accepts: u, l, ul, lu, ll, ull, llu. */
static bool lex_valid_int_suffix(const char *suffix, int length)
{
	static const char *const suffixes[] = { "", "u", "l", "ul", "lu", "ll", "ull", "llu" };
	char lower[4];
	size_t i;

	if (length > 3)
		return false;
	for (int k = 0; k < length; k++)
		lower[k] = (char)(suffix[k] | 0x20);
	lower[length] = '\0';
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (strcmp(lower, suffixes[i]) == 0)
			return true;
	return false;
}

/*
 * A duration suffix at *pos (`100ms`, `1s`, as current bpftrace: ns, us,
 * ms, s, m, h, d): steps over it and returns its length in nanoseconds;
 * 0 when there is none (the suffix must end the literal).
 */
static uint64_t lex_duration_unit(const char **pos)
{
	static const struct { const char *unit; uint64_t nanoseconds; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
		{ "m", 60000000000ULL }, { "h", 3600000000000ULL }, { "d", 86400000000000ULL },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t length = strlen(units[i].unit);
		if (strncmp(*pos, units[i].unit, length) == 0 && !lex_is_ident_char((*pos)[length])) {
			*pos += length;
			return units[i].nanoseconds;
		}
	}
	return 0;
}

/*
 * Adds one digit to an accumulating value; false on overflow.
 */
static bool lex_accumulate(uint64_t *value, unsigned base, unsigned digit)
{
	if (*value > (UINT64_MAX - digit) / base)
		return false;
	*value = *value * base + digit;
	return true;
}

/*
 * integer := decimal [('e'|'E') digits] | '0x' hex | '0b' binary | '0' octal,
 *            digits may be separated by '_', then an optional u/l suffix;
 *            or decimal then a duration unit (`100ms`: 100000000).
 */
static struct token lex_number(struct lexer *lexer)
{
	struct token token = lex_begin(lexer, TOK_INT);
	const char *digits;
	const char *digits_end;
	const char *suffix;
	unsigned base = 10;
	uint64_t value = 0;
	uint64_t exponent = 0;
	bool has_exponent = false;
	bool malformed = false;

	if (lexer->pos[0] == '0' && (lexer->pos[1] == 'x' || lexer->pos[1] == 'X')) {
		base = 16;
		lexer->pos += 2;
	} else if (lexer->pos[0] == '0' && (lexer->pos[1] == 'b' || lexer->pos[1] == 'B')) {
		base = 2;
		lexer->pos += 2;
	}
	digits = lexer->pos;
	while (lex_is_digit(*lexer->pos) || *lexer->pos == '_' ||
	       (base == 16 && lex_hex_digit_value(*lexer->pos) >= 0))
		lexer->pos++;
	digits_end = lexer->pos;
	if (base == 10 && digits_end - digits > 1 && digits[0] == '0')
		base = 8;
	if (base == 10 && (*lexer->pos == 'e' || *lexer->pos == 'E') &&
	    lex_is_digit(lexer->pos[1])) {
		has_exponent = true;
		lexer->pos++;
		while (lex_is_digit(*lexer->pos)) {
			if (exponent < 1000)
				exponent = exponent * 10 + (uint64_t)(*lexer->pos - '0');
			lexer->pos++;
		}
	}
	uint64_t duration = base == 10 && !has_exponent ? lex_duration_unit(&lexer->pos) : 0;
	suffix = lexer->pos;
	while (!duration && (*lexer->pos == 'u' || *lexer->pos == 'U' || *lexer->pos == 'l' ||
			     *lexer->pos == 'L'))
		lexer->pos++;
	if (!lex_valid_int_suffix(suffix, (int)(lexer->pos - suffix)))
		malformed = true;
	/* `12abc` is one bad literal, not a number followed by a name. */
	while (lex_is_ident_char(*lexer->pos)) {
		malformed = true;
		lexer->pos++;
	}
	token = lex_finish(lexer, token);

	if (digits == digits_end || digits_end[-1] == '_' || digits[0] == '_')
		malformed = true;
	for (const char *p = digits; p < digits_end && !malformed; p++) {
		int digit;

		if (*p == '_')
			continue;
		digit = lex_hex_digit_value(*p);
		if (digit < 0 || (unsigned)digit >= base) {
			malformed = true;
			break;
		}
		if (!lex_accumulate(&value, base, (unsigned)digit))
			return lex_error(token, "integer literal is too large");
	}
	if (malformed)
		return lex_error(token, "invalid integer literal");
	if (has_exponent) {
		for (uint64_t i = 0; i < exponent; i++) {
			if (value == 0)
				break;
			if (!lex_accumulate(&value, 10, 0))
				return lex_error(token, "integer literal is too large");
		}
	}
	if (duration && value > UINT64_MAX / duration)
		return lex_error(token, "duration is too large (over 2^64 nanoseconds)");
	token.int_value = duration ? value * duration : value;
	return token;
}

/* ---- strings ---- */

/*
 * Reads one escape sequence after the backslash at p; stores the byte it
 * stands for in *byte and returns the first character after it, or NULL
 * when the escape is not valid.
 */
static const char *lex_escape(const char *p, unsigned char *byte)
{
	unsigned value = 0;
	int count;

	switch (*p) {
	case 'n': *byte = '\n'; return p + 1;
	case 't': *byte = '\t'; return p + 1;
	case 'r': *byte = '\r'; return p + 1;
	case 'a': *byte = '\a'; return p + 1;
	case 'b': *byte = '\b'; return p + 1;
	case 'f': *byte = '\f'; return p + 1;
	case 'v': *byte = '\v'; return p + 1;
	case 'e': *byte = 0x1b; return p + 1;
	case '\\': *byte = '\\'; return p + 1;
	case '"': *byte = '"'; return p + 1;
	case '\'': *byte = '\''; return p + 1;
	case '?': *byte = '?'; return p + 1;
	case 'x':
		p++;
		for (count = 0; count < 2 && lex_hex_digit_value(*p) >= 0; count++, p++)
			value = value * 16 + (unsigned)lex_hex_digit_value(*p);
		if (count == 0)
			return NULL;
		*byte = (unsigned char)value;
		return p;
	default:
		if (*p < '0' || *p > '7')
			return NULL;
		for (count = 0; count < 3 && *p >= '0' && *p <= '7'; count++, p++)
			value = value * 8 + (unsigned)(*p - '0');
		if (value > 255)
			return NULL;
		*byte = (unsigned char)value;
		return p;
	}
}

/* string := '"' { character | '\' escape } '"', all on one line */
static struct token lex_string(struct lexer *lexer)
{
	struct token token = lex_begin(lexer, TOK_STRING);
	struct token bad_escape;
	bool has_bad_escape = false;

	lexer->pos++;
	while (*lexer->pos != '"') {
		if (*lexer->pos == '\0' || *lexer->pos == '\n') {
			token = lex_finish(lexer, token);
			if (token.length > 0 && token.start[token.length - 1] == '\r')
				token.loc.length = token.length - 1;
			return lex_error(token, "unterminated string");
		}
		if (*lexer->pos == '\\') {
			unsigned char byte;
			const char *after = lex_escape(lexer->pos + 1, &byte);

			if (!after) {
				if (!has_bad_escape) {
					bad_escape = lex_begin(lexer, TOK_ERROR);
					bad_escape.length = lexer->pos[1] && lexer->pos[1] != '\n' ? 2 : 1;
					bad_escape.loc.length = bad_escape.length;
					has_bad_escape = true;
				}
				after = lexer->pos + (lexer->pos[1] && lexer->pos[1] != '\n' ? 2 : 1);
			}
			lexer->pos = after;
			continue;
		}
		lexer->pos++;
	}
	lexer->pos++;
	token = lex_finish(lexer, token);
	if (has_bad_escape) {
		unsigned char c = (unsigned char)bad_escape.start[1];

		if (c == 'x')
			return lex_error(bad_escape, "\\x escape needs at least one hex digit");
		if (c >= '0' && c <= '7')
			return lex_error(bad_escape, "octal escape out of range");
		if (c >= 0x20 && c < 0x7f)
			return lex_error(bad_escape, "invalid escape sequence '\\%c'", c);
		return lex_error(bad_escape, "invalid escape sequence in string");
	}
	return token;
}

int lex_string_value(const struct token *token, char *out)
{
	const char *p = token->start + 1;
	const char *end = token->start + token->length - 1;
	int length = 0;

	while (p < end) {
		if (*p == '\\') {
			unsigned char byte = 0;
			const char *after = lex_escape(p + 1, &byte);

			if (!after)
				after = p + 2;
			out[length++] = (char)byte;
			p = after;
		} else {
			out[length++] = *p++;
		}
	}
	return length;
}

/* ---- names ---- */

static const struct {
	const char *spelling;
	enum token_kind kind;
} lex_keywords[] = {
	{ "if", TOK_IF },
	{ "else", TOK_ELSE },
	{ "while", TOK_WHILE },
	{ "for", TOK_FOR },
	{ "unroll", TOK_UNROLL },
	{ "break", TOK_BREAK },
	{ "continue", TOK_CONTINUE },
	{ "return", TOK_RETURN },
	{ "let", TOK_LET },
	{ "sizeof", TOK_SIZEOF },
	{ "offsetof", TOK_OFFSETOF },
	{ "struct", TOK_STRUCT },
	{ "union", TOK_UNION },
	{ "enum", TOK_ENUM },
};

static struct token lex_identifier(struct lexer *lexer)
{
	struct token token = lex_begin(lexer, TOK_IDENT);
	size_t i;

	while (lex_is_ident_char(*lexer->pos))
		lexer->pos++;
	token = lex_finish(lexer, token);
	for (i = 0; i < sizeof(lex_keywords) / sizeof(lex_keywords[0]); i++) {
		if (strlen(lex_keywords[i].spelling) == (size_t)token.length &&
		    memcmp(lex_keywords[i].spelling, token.start, (size_t)token.length) == 0) {
			token.kind = lex_keywords[i].kind;
			break;
		}
	}
	return token;
}

/* variable := '$' name | '$' digits | '$#' */
static struct token lex_dollar(struct lexer *lexer)
{
	struct token token = lex_begin(lexer, TOK_VAR);

	lexer->pos++;
	if (*lexer->pos == '#') {
		lexer->pos++;
		token.kind = TOK_POSITIONAL_COUNT;
		return lex_finish(lexer, token);
	}
	if (lex_is_digit(*lexer->pos)) {
		uint64_t value = 0;
		bool overflow = false;

		token.kind = TOK_POSITIONAL;
		while (lex_is_digit(*lexer->pos)) {
			if (!lex_accumulate(&value, 10, (unsigned)(*lexer->pos - '0')))
				overflow = true;
			lexer->pos++;
		}
		if (lex_is_ident_char(*lexer->pos)) {
			while (lex_is_ident_char(*lexer->pos))
				lexer->pos++;
			token = lex_finish(lexer, token);
			return lex_error(token, "invalid positional parameter");
		}
		token = lex_finish(lexer, token);
		if (overflow || value > 0xffff)
			return lex_error(token, "positional parameter number is too large");
		token.int_value = value;
		return token;
	}
	if (!lex_is_ident_start(*lexer->pos)) {
		token = lex_finish(lexer, token);
		return lex_error(token, "expected a variable name after '$'");
	}
	while (lex_is_ident_char(*lexer->pos))
		lexer->pos++;
	return lex_finish(lexer, token);
}

/* map := '@' [name] */
static struct token lex_at(struct lexer *lexer)
{
	struct token token = lex_begin(lexer, TOK_MAP);

	lexer->pos++;
	if (lex_is_ident_start(*lexer->pos))
		while (lex_is_ident_char(*lexer->pos))
			lexer->pos++;
	return lex_finish(lexer, token);
}

/* ---- operators ---- */

/* Operators listed longest first, so the first prefix that matches wins. */
static const struct {
	const char *spelling;
	enum token_kind kind;
} lex_operators[] = {
	{ "<<=", TOK_SHL_ASSIGN }, { ">>=", TOK_SHR_ASSIGN },
	{ "->", TOK_ARROW }, { "..", TOK_DOTDOT },
	{ "<=", TOK_LE }, { ">=", TOK_GE }, { "==", TOK_EQ }, { "!=", TOK_NE },
	{ "<<", TOK_SHL }, { ">>", TOK_SHR }, { "&&", TOK_LAND }, { "||", TOK_LOR },
	{ "++", TOK_INC }, { "--", TOK_DEC },
	{ "+=", TOK_ADD_ASSIGN }, { "-=", TOK_SUB_ASSIGN }, { "*=", TOK_MUL_ASSIGN },
	{ "/=", TOK_DIV_ASSIGN }, { "%=", TOK_MOD_ASSIGN }, { "&=", TOK_AND_ASSIGN },
	{ "|=", TOK_OR_ASSIGN }, { "^=", TOK_XOR_ASSIGN },
	{ "(", TOK_LPAREN }, { ")", TOK_RPAREN }, { "{", TOK_LBRACE }, { "}", TOK_RBRACE },
	{ "[", TOK_LBRACKET }, { "]", TOK_RBRACKET }, { ",", TOK_COMMA },
	{ ";", TOK_SEMICOLON }, { ":", TOK_COLON }, { "?", TOK_QUESTION }, { ".", TOK_DOT },
	{ "+", TOK_PLUS }, { "-", TOK_MINUS }, { "*", TOK_STAR }, { "/", TOK_SLASH },
	{ "%", TOK_PERCENT }, { "&", TOK_AMP }, { "|", TOK_PIPE }, { "^", TOK_CARET },
	{ "~", TOK_TILDE }, { "!", TOK_BANG }, { "<", TOK_LT }, { ">", TOK_GT },
	{ "=", TOK_ASSIGN },
};

static struct token lex_operator(struct lexer *lexer)
{
	struct token token = lex_begin(lexer, TOK_ERROR);
	unsigned char c = (unsigned char)*lexer->pos;
	size_t i;

	for (i = 0; i < sizeof(lex_operators) / sizeof(lex_operators[0]); i++) {
		size_t length = strlen(lex_operators[i].spelling);

		if (strncmp(lexer->pos, lex_operators[i].spelling, length) == 0) {
			token.kind = lex_operators[i].kind;
			lexer->pos += length;
			token = lex_finish(lexer, token);
			if (token.kind == TOK_SLASH && *lex_peek_past_space(lexer) == '{')
				token.kind = TOK_PRED_END;
			return token;
		}
	}
	lexer->pos++;
	token = lex_finish(lexer, token);
	if (c == '\'')
		return lex_error(token, "single quotes are not allowed; strings use double quotes");
	if (c >= 0x20 && c < 0x7f)
		return lex_error(token, "unexpected character '%c'", c);
	return lex_error(token, "unexpected character '\\x%02x'", c);
}

struct token lex_next(struct lexer *lexer)
{
	struct token error;
	char c;

	if (!lex_skip_space(lexer, &error))
		return error;
	c = *lexer->pos;
	if (c == '\0')
		return lex_finish(lexer, lex_begin(lexer, TOK_EOF));
	if (lex_is_digit(c))
		return lex_number(lexer);
	if (lex_is_ident_start(c))
		return lex_identifier(lexer);
	if (c == '"')
		return lex_string(lexer);
	if (c == '$')
		return lex_dollar(lexer);
	if (c == '@')
		return lex_at(lexer);
	return lex_operator(lexer);
}

/* ---- probe mode ---- */

/* Skips a preprocessor line, including lines continued with a backslash. */
static void lex_skip_preprocessor_line(struct lexer *lexer)
{
	while (*lexer->pos && *lexer->pos != '\n') {
		if (lexer->pos[0] == '\\' && lexer->pos[1] == '\n')
			lex_advance(lexer);
		lex_advance(lexer);
	}
}

/* Is the text at pos a keyword that starts a preamble item (a C
 * definition, a map declaration) followed by a blank or '{'? */
static bool lex_at_c_definition(const struct lexer *lexer)
{
	static const char *const words[] = { "struct", "union", "enum", "typedef", "let" };
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t length = strlen(words[i]);

		if (strncmp(lexer->pos, words[i], length) == 0 &&
		    (lex_is_space(lexer->pos[length]) || lexer->pos[length] == '{'))
			return true;
	}
	return false;
}

struct token lex_probe_spec(struct lexer *lexer)
{
	struct token token;
	bool seen_colon = false;

	for (;;) {
		if (!lex_skip_space(lexer, &token))
			return token;
		if (*lexer->pos == '#')
			lex_skip_preprocessor_line(lexer);
		else
			break;
	}
	/* a C definition is lexed as ordinary tokens: the parser reads it */
	if (!lex_is_ident_start(*lexer->pos) || lex_at_c_definition(lexer))
		return lex_next(lexer);

	token = lex_begin(lexer, TOK_PROBE_SPEC);
	for (;;) {
		char c = *lexer->pos;

		/* Also stop at characters no probe contains, so `BEGIN;` or
		 * `BEGIN()` get a syntax error rather than an unknown probe. */
		if (c == '\0' || lex_is_space(c) || strchr(",{};()=", c))
			break;
		if (c == '/' && (!seen_colon || lexer->pos[1] == '/'))
			break;
		if (c == ':')
			seen_colon = true;
		if (c == '"') {
			/* A quoted part, e.g. a path with blanks in it. */
			lexer->pos++;
			while (*lexer->pos && *lexer->pos != '"' && *lexer->pos != '\n')
				lexer->pos++;
			if (*lexer->pos != '"') {
				token = lex_finish(lexer, token);
				return lex_error(token, "unterminated string in probe");
			}
		}
		lexer->pos++;
	}
	return lex_finish(lexer, token);
}

/* ---- names for messages ---- */

const char *lex_kind_name(enum token_kind kind)
{
	static const char *const names[TOK_KIND_COUNT] = {
		[TOK_EOF] = "end of input",
		[TOK_ERROR] = "invalid token",
		[TOK_PROBE_SPEC] = "probe",
		[TOK_INT] = "integer",
		[TOK_STRING] = "string",
		[TOK_IDENT] = "identifier",
		[TOK_VAR] = "variable",
		[TOK_POSITIONAL] = "positional parameter",
		[TOK_POSITIONAL_COUNT] = "'$#'",
		[TOK_MAP] = "map",
		[TOK_LPAREN] = "'('",
		[TOK_RPAREN] = "')'",
		[TOK_LBRACE] = "'{'",
		[TOK_RBRACE] = "'}'",
		[TOK_LBRACKET] = "'['",
		[TOK_RBRACKET] = "']'",
		[TOK_COMMA] = "','",
		[TOK_SEMICOLON] = "';'",
		[TOK_COLON] = "':'",
		[TOK_QUESTION] = "'?'",
		[TOK_DOT] = "'.'",
		[TOK_DOTDOT] = "'..'",
		[TOK_ARROW] = "'->'",
		[TOK_PRED_END] = "'/'",
		[TOK_PLUS] = "'+'",
		[TOK_MINUS] = "'-'",
		[TOK_STAR] = "'*'",
		[TOK_SLASH] = "'/'",
		[TOK_PERCENT] = "'%'",
		[TOK_AMP] = "'&'",
		[TOK_PIPE] = "'|'",
		[TOK_CARET] = "'^'",
		[TOK_TILDE] = "'~'",
		[TOK_BANG] = "'!'",
		[TOK_LT] = "'<'",
		[TOK_GT] = "'>'",
		[TOK_LE] = "'<='",
		[TOK_GE] = "'>='",
		[TOK_EQ] = "'=='",
		[TOK_NE] = "'!='",
		[TOK_SHL] = "'<<'",
		[TOK_SHR] = "'>>'",
		[TOK_LAND] = "'&&'",
		[TOK_LOR] = "'||'",
		[TOK_INC] = "'++'",
		[TOK_DEC] = "'--'",
		[TOK_ASSIGN] = "'='",
		[TOK_ADD_ASSIGN] = "'+='",
		[TOK_SUB_ASSIGN] = "'-='",
		[TOK_MUL_ASSIGN] = "'*='",
		[TOK_DIV_ASSIGN] = "'/='",
		[TOK_MOD_ASSIGN] = "'%='",
		[TOK_AND_ASSIGN] = "'&='",
		[TOK_OR_ASSIGN] = "'|='",
		[TOK_XOR_ASSIGN] = "'^='",
		[TOK_SHL_ASSIGN] = "'<<='",
		[TOK_SHR_ASSIGN] = "'>>='",
		[TOK_IF] = "'if'",
		[TOK_ELSE] = "'else'",
		[TOK_WHILE] = "'while'",
		[TOK_FOR] = "'for'",
		[TOK_UNROLL] = "'unroll'",
		[TOK_BREAK] = "'break'",
		[TOK_CONTINUE] = "'continue'",
		[TOK_RETURN] = "'return'",
		[TOK_LET] = "'let'",
		[TOK_SIZEOF] = "'sizeof'",
		[TOK_OFFSETOF] = "'offsetof'",
		[TOK_STRUCT] = "'struct'",
		[TOK_UNION] = "'union'",
		[TOK_ENUM] = "'enum'",
	};

	if ((int)kind < 0 || kind >= TOK_KIND_COUNT || !names[kind])
		return "token";
	return names[kind];
}

void lex_describe(const struct token *token, char *out, size_t size)
{
	/* Long tokens (strings, probe names) are cut so messages stay one line. */
	enum { SHOWN = 32 };
	int shown = token->length > SHOWN ? SHOWN : token->length;
	const char *more = token->length > SHOWN ? "..." : "";

	switch (token->kind) {
	case TOK_INT:
	case TOK_STRING:
	case TOK_IDENT:
	case TOK_VAR:
	case TOK_POSITIONAL:
	case TOK_MAP:
	case TOK_PROBE_SPEC:
		snprintf(out, size, "%s '%.*s%s'", lex_kind_name(token->kind), shown,
			 token->start, more);
		break;
	default:
		snprintf(out, size, "%s", lex_kind_name(token->kind));
		break;
	}
}
