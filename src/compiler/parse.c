/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The parser: tokens from lex.c in, the AST of ast.h out.
 *
 * It is a hand-written recursive-descent parser with one token of
 * lookahead (`p->tok`). Statements and the outer structure of a program
 * follow the grammar productions written above each function; binary
 * operators are parsed by precedence climbing (parse_binary), which covers
 * C's ten binary precedence levels with one function instead of ten.
 *
 * Three places need to see further than one token, and they do it by
 * copying the lexer (a plain position) and lexing ahead on the copy:
 *  - `(` may open a cast, a parenthesised expression or a tuple. It is a
 *    cast when a type name follows (`(uint8)`, `(struct sock *)`), or when
 *    a lone identifier in parentheses is directly followed by an operand,
 *    as in `(pid_t)arg0`; `(pid) - 1` stays a subtraction.
 *  - `sizeof(` and `offsetof(` take a type or an expression, decided the
 *    same way.
 *  - probe specifiers are raw text, so after `}` and after a `,` in a
 *    probe list the parser asks the lexer for a probe rather than a token.
 *
 * The parser knows no builtin or function names: an identifier followed by
 * '(' is a call, any other identifier a NODE_BUILTIN (true and false aside),
 * and semantic analysis rejects the ones that do not exist, with their
 * location. New builtins and functions therefore never touch this file.
 *
 * Error handling: the first error ends the parse. The message goes to the
 * diagnostic sink with the offending token's location and the parser
 * longjmps back to parse_program(); every node made so far already belongs
 * to the AST arena, so nothing leaks. A single precise message is worth
 * more than a cascade produced by guessing how to recover. Nesting is
 * capped (PARSE_MAX_DEPTH) so that hostile input can neither overflow the
 * C stack here nor produce a tree too deep for the later recursive passes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "compiler/ast.h"
#include "compiler/lex.h"
#include "compiler/parse_internal.h"

/* ---- errors ---- */

/*
 * Reports at tok and abandons the parse. An invalid token explains itself:
 * its own message is better than "expected X, found invalid token".
 */
void parse_fail_at(struct parser *p, const struct token *tok, const char *fmt, ...)
{
	char message[256];
	va_list ap;

	if (tok->kind == TOK_ERROR) {
		diag_error(p->diag, tok->loc, "%s", tok->message);
	} else {
		va_start(ap, fmt);
		vsnprintf(message, sizeof(message), fmt, ap);
		va_end(ap);
		diag_error(p->diag, tok->loc, "%s", message);
	}
	longjmp(p->fail, 1);
}

static void parse_fail_node(struct parser *p, const struct node *node, const char *message)
	__attribute__((noreturn));

static void parse_fail_node(struct parser *p, const struct node *node, const char *message)
{
	diag_error(p->diag, node->loc, "%s", message);
	longjmp(p->fail, 1);
}

/* "expected <what>, found <current token>" */
void parse_fail_expected(struct parser *p, const char *what)
{
	char found[96];

	lex_describe(&p->tok, found, sizeof(found));
	parse_fail_at(p, &p->tok, "expected %s, found %s", what, found);
}

void parse_enter(struct parser *p)
{
	if (++p->depth > PARSE_MAX_DEPTH)
		parse_fail_at(p, &p->tok, "program is nested too deeply (more than %d levels)",
			      PARSE_MAX_DEPTH);
}

void parse_leave(struct parser *p)
{
	p->depth--;
}

/* ---- tokens ---- */

struct token parse_advance(struct parser *p)
{
	struct token consumed = p->tok;

	p->tok = lex_next(&p->lexer);
	return consumed;
}

/* Consumes the current token and reads a probe specifier after it. */
struct token parse_advance_to_probe(struct parser *p)
{
	struct token consumed = p->tok;

	p->tok = lex_probe_spec(&p->lexer);
	return consumed;
}

bool parse_accept(struct parser *p, enum token_kind kind)
{
	if (p->tok.kind != kind)
		return false;
	parse_advance(p);
	return true;
}

/* Consumes a token of the given kind or fails with "expected <what>". */
struct token parse_expect(struct parser *p, enum token_kind kind, const char *what)
{
	if (p->tok.kind != kind)
		parse_fail_expected(p, what);
	return parse_advance(p);
}

/* The n-th token after the current one, without consuming anything. */
struct token parse_peek(const struct parser *p, int n)
{
	struct lexer copy = p->lexer;
	struct token tok = p->tok;

	while (n-- > 0 && tok.kind != TOK_EOF)
		tok = lex_next(&copy);
	return tok;
}

/* ---- nodes ---- */

struct node *parse_new(struct parser *p, enum node_kind kind, const struct token *tok)
{
	return ast_new_node(p->ast, kind, tok->loc);
}

char *parse_token_text(struct parser *p, const struct token *tok, int skip)
{
	return ast_strdup(p->ast, tok->start + skip, (size_t)(tok->length - skip));
}

/* A location running from `first` to the end of `last` when both are on one line. */
static struct src_loc parse_span(const struct token *first, const struct token *last)
{
	struct src_loc loc = first->loc;

	if (last->loc.line == first->loc.line && last->loc.column >= first->loc.column)
		loc.length = last->loc.column + last->loc.length - first->loc.column;
	return loc;
}

/* ---- types ---- */

/* Type names that make `(name)` a cast whatever follows it. */
static bool parse_is_type_keyword(const struct token *tok)
{
	static const char *const names[] = {
		"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
		"bool", "void", "char", "short", "int", "long", "unsigned", "signed",
	};
	size_t i;

	if (tok->kind != TOK_IDENT)
		return false;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == (size_t)tok->length &&
		    memcmp(names[i], tok->start, (size_t)tok->length) == 0)
			return true;
	return false;
}

/* C base type words that combine: `unsigned long`, `long long`. */
bool parse_is_c_base_word(const struct token *tok)
{
	static const char *const words[] = { "char", "short", "int", "long", "unsigned", "signed" };
	size_t i;

	if (tok->kind != TOK_IDENT)
		return false;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i]) == (size_t)tok->length &&
		    memcmp(words[i], tok->start, (size_t)tok->length) == 0)
			return true;
	return false;
}

bool parse_is_record_keyword(enum token_kind kind)
{
	return kind == TOK_STRUCT || kind == TOK_UNION || kind == TOK_ENUM;
}

/* Can this token begin an operand (and not continue a binary expression)? */
static bool parse_starts_operand(enum token_kind kind)
{
	switch (kind) {
	case TOK_INT:
	case TOK_STRING:
	case TOK_IDENT:
	case TOK_VAR:
	case TOK_MAP:
	case TOK_POSITIONAL:
	case TOK_POSITIONAL_COUNT:
	case TOK_LPAREN:
	case TOK_BANG:
	case TOK_TILDE:
	case TOK_SIZEOF:
	case TOK_OFFSETOF:
		return true;
	default:
		return false;
	}
}

/*
 * Does a type name start `first` tokens after the current one? With
 * need_operand_after, a lone identifier in parentheses counts only when an
 * operand follows the ')', which tells `(pid_t)arg0` from `(pid) - 1`.
 */
static bool parse_type_follows(const struct parser *p, int first, bool need_operand_after)
{
	struct lexer ahead = p->lexer;
	struct token tok = p->tok;

	while (first-- > 0)
		tok = lex_next(&ahead);
	if (parse_is_record_keyword(tok.kind))
		return true;
	if (tok.kind != TOK_IDENT)
		return false;
	if (parse_is_type_keyword(&tok))
		return true;
	tok = lex_next(&ahead);
	if (tok.kind == TOK_STAR) {
		while (tok.kind == TOK_STAR)
			tok = lex_next(&ahead);
		return tok.kind == TOK_RPAREN;
	}
	if (tok.kind == TOK_RPAREN && need_operand_after)
		return parse_starts_operand(lex_next(&ahead).kind);
	return false;
}

void parse_type_append(struct parser *p, char *buf, size_t size, const char *text,
			      int length)
{
	size_t used = strlen(buf);

	if (used + (size_t)length + 1 > size)
		parse_fail_at(p, &p->tok, "name is too long (over %zu characters)", size - 1);
	memcpy(buf + used, text, (size_t)length);
	buf[used + (size_t)length] = '\0';
}

/*
 * type := ('struct' | 'union' | 'enum') IDENT { '*' }
 *       | IDENT { C-base-word } { '*' } [ '[' INT ']' ]
 *
 * Returns the normalised spelling: words separated by one blank, then the
 * stars after a blank: "struct task_struct *", "unsigned long", "uint8[4]".
 */
static char *parse_type_name(struct parser *p)
{
	char name[256] = "";
	struct token tok;

	if (parse_is_record_keyword(p->tok.kind)) {
		tok = parse_advance(p);
		parse_type_append(p, name, sizeof(name), tok.start, tok.length);
		if (p->tok.kind != TOK_IDENT)
			parse_fail_expected(p, "a type name after 'struct', 'union' or 'enum'");
		tok = parse_advance(p);
		parse_type_append(p, name, sizeof(name), " ", 1);
		parse_type_append(p, name, sizeof(name), tok.start, tok.length);
	} else if (p->tok.kind == TOK_IDENT) {
		bool combines = parse_is_c_base_word(&p->tok);

		tok = parse_advance(p);
		parse_type_append(p, name, sizeof(name), tok.start, tok.length);
		while (combines && parse_is_c_base_word(&p->tok)) {
			tok = parse_advance(p);
			parse_type_append(p, name, sizeof(name), " ", 1);
			parse_type_append(p, name, sizeof(name), tok.start, tok.length);
		}
	} else {
		parse_fail_expected(p, "a type name");
	}
	if (p->tok.kind == TOK_STAR)
		parse_type_append(p, name, sizeof(name), " ", 1);
	while (p->tok.kind == TOK_STAR) {
		parse_advance(p);
		parse_type_append(p, name, sizeof(name), "*", 1);
	}
	if (p->tok.kind == TOK_LBRACKET) {
		parse_advance(p);
		if (p->tok.kind != TOK_INT)
			parse_fail_expected(p, "an array length");
		tok = parse_advance(p);
		parse_type_append(p, name, sizeof(name), "[", 1);
		parse_type_append(p, name, sizeof(name), tok.start, tok.length);
		parse_type_append(p, name, sizeof(name), "]", 1);
		parse_expect(p, TOK_RBRACKET, "']' after array length");
	}
	return ast_strdup(p->ast, name, strlen(name));
}

/* ---- expressions ---- */

static struct node *parse_unary(struct parser *p);
static struct node *parse_statement(struct parser *p, bool *needs_separator);
static struct node *parse_condition(struct parser *p, const char *keyword);

/* args := [ expression { ',' expression } ] -- up to (not including) `close` */
static struct node *parse_expression_list(struct parser *p, enum token_kind close,
					  const char *what)
{
	struct node *list = NULL;
	struct node **tail = &list;

	if (p->tok.kind == close)
		return NULL;
	for (;;) {
		*tail = parse_expression(p);
		tail = &(*tail)->next;
		if (!parse_accept(p, TOK_COMMA))
			break;
	}
	if (p->tok.kind != close)
		parse_fail_expected(p, what);
	return list;
}

/* sizeof := 'sizeof' '(' ( type | expression ) ')' */
static struct node *parse_sizeof(struct parser *p)
{
	struct token keyword = parse_advance(p);
	struct node *node = parse_new(p, NODE_SIZEOF, &keyword);

	parse_expect(p, TOK_LPAREN, "'(' after 'sizeof'");
	if (parse_type_follows(p, 0, false))
		node->name = parse_type_name(p);
	else
		node->lhs = parse_expression(p);
	parse_expect(p, TOK_RPAREN, "')' after sizeof operand");
	return node;
}

/*
 * offsetof := 'offsetof' '(' ( record-type | IDENT | expression ) ','
 *             IDENT { '.' IDENT } ')'
 */
static struct node *parse_offsetof(struct parser *p)
{
	struct token keyword = parse_advance(p);
	struct node *node = parse_new(p, NODE_OFFSETOF, &keyword);
	char path[256] = "";
	struct token field;

	parse_expect(p, TOK_LPAREN, "'(' after 'offsetof'");
	if (parse_is_record_keyword(p->tok.kind) ||
	    (p->tok.kind == TOK_IDENT && parse_peek(p, 1).kind == TOK_COMMA))
		node->name = parse_type_name(p);
	else
		node->lhs = parse_expression(p);
	parse_expect(p, TOK_COMMA, "',' after the type in offsetof");
	for (;;) {
		if (p->tok.kind != TOK_IDENT)
			parse_fail_expected(p, "a field name");
		field = parse_advance(p);
		parse_type_append(p, path, sizeof(path), field.start, field.length);
		if (!parse_accept(p, TOK_DOT))
			break;
		parse_type_append(p, path, sizeof(path), ".", 1);
	}
	parse_expect(p, TOK_RPAREN, "')' after offsetof field");
	node->string_value = ast_strdup(p->ast, path, strlen(path));
	node->string_length = (int)strlen(path);
	return node;
}

/*
 * record := '(' IDENT '=' expression { ',' IDENT '=' expression } ')'
 *
 * Current bpftrace's named tuple: a NODE_TUPLE whose rhs lists the field
 * names (NODE_STRING), one per element.
 */
static struct node *parse_record(struct parser *p, const struct token *open)
{
	struct node *record = parse_new(p, NODE_TUPLE, open);
	struct node **values = &record->args;
	struct node **names = &record->rhs;

	do {
		if (p->tok.kind != TOK_IDENT || parse_peek(p, 1).kind != TOK_ASSIGN)
			parse_fail_expected(p, "a field as name = value");
		struct token name = parse_advance(p);
		*names = parse_new(p, NODE_STRING, &name);
		(*names)->string_value = parse_token_text(p, &name, 0);
		(*names)->string_length = name.length;
		names = &(*names)->next;
		parse_advance(p);
		*values = parse_expression(p);
		values = &(*values)->next;
	} while (parse_accept(p, TOK_COMMA));
	parse_expect(p, TOK_RPAREN, "')' or ',' in record");
	return record;
}

/* paren := '(' expression ')' | '(' expression ',' expression { ',' expression } ')' | record */
static struct node *parse_paren(struct parser *p)
{
	struct token open = parse_advance(p);
	if (p->tok.kind == TOK_IDENT && parse_peek(p, 1).kind == TOK_ASSIGN)
		return parse_record(p, &open);
	struct node *first = parse_expression(p);
	struct node *tuple;
	struct node **tail;

	if (parse_accept(p, TOK_RPAREN))
		return first;
	if (p->tok.kind != TOK_COMMA)
		parse_fail_expected(p, "')' or ','");
	tuple = parse_new(p, NODE_TUPLE, &open);
	tuple->args = first;
	tail = &first->next;
	while (parse_accept(p, TOK_COMMA)) {
		*tail = parse_expression(p);
		tail = &(*tail)->next;
	}
	parse_expect(p, TOK_RPAREN, "')' or ',' in tuple");
	return tuple;
}

/*
 * block-expression := '{' { statement ';' } expression '}'
 *
 * Current bpftrace's block used as a value: the statements run, then the
 * last expression, written without ';', is the value.
 */
static struct node *parse_block_expression(struct parser *p, const char *what)
{
	struct token open = p->tok;
	struct node *node = parse_new(p, NODE_BLOCK_EXPR, &open);

	node->body = parse_block_items(p, what, &node->lhs);
	parse_advance(p);
	if (!node->lhs)
		parse_fail_at(p, &open, "a block used as a value must end with an expression "
			      "that has no ';' after it");
	return node;
}

/*
 * if-expression := 'if' '(' expression ')' block-expression
 *                  'else' ( if-expression | block-expression )
 *
 * An if used as a value (current bpftrace: `$x = if (c) { 1 } else { 2 }`):
 * a NODE_TERNARY of two block expressions, named "if" for its messages.
 */
static struct node *parse_if_expression(struct parser *p)
{
	struct token keyword = parse_advance(p);
	struct node *node = parse_new(p, NODE_TERNARY, &keyword);

	parse_enter(p);
	node->name = parse_token_text(p, &keyword, 0);
	node->cond = parse_condition(p, "if");
	node->lhs = parse_block_expression(p, "'{' after if condition");
	if (p->tok.kind != TOK_ELSE)
		parse_fail_at(p, &keyword, "an if used as a value needs an else branch "
			      "(`if (c) { a } else { b }`)");
	parse_advance(p);
	node->rhs = p->tok.kind == TOK_IF ? parse_if_expression(p)
					    : parse_block_expression(p, "'{' or 'if' after 'else'");
	parse_leave(p);
	return node;
}

struct node *parse_string(struct parser *p)
{
	struct token tok = parse_advance(p);
	struct node *node = parse_new(p, NODE_STRING, &tok);
	char *bytes = xmalloc((size_t)tok.length);
	int length = lex_string_value(&tok, bytes);

	node->string_value = ast_strdup(p->ast, bytes, (size_t)length);
	node->string_length = length;
	free(bytes);
	return node;
}

/*
 * primary := INT | STRING | '$' NAME | '$' N | '$#' | '@' [NAME]
 *          | IDENT [ '(' [ args ] ')' ]
 *          | paren | block-expression | if-expression | sizeof | offsetof
 */
static struct node *parse_primary(struct parser *p)
{
	struct token tok = p->tok;
	struct node *node;

	switch (tok.kind) {
	case TOK_INT:
		parse_advance(p);
		node = parse_new(p, NODE_INT, &tok);
		node->int_value = tok.int_value;
		return node;
	case TOK_STRING:
		return parse_string(p);
	case TOK_VAR:
		parse_advance(p);
		node = parse_new(p, NODE_VAR, &tok);
		node->name = parse_token_text(p, &tok, 1);
		return node;
	case TOK_POSITIONAL:
		parse_advance(p);
		node = parse_new(p, NODE_POSITIONAL, &tok);
		node->int_value = tok.int_value;
		return node;
	case TOK_POSITIONAL_COUNT:
		parse_advance(p);
		return parse_new(p, NODE_POSITIONAL_COUNT, &tok);
	case TOK_MAP:
		parse_advance(p);
		node = parse_new(p, NODE_MAP, &tok);
		node->name = parse_token_text(p, &tok, 0);
		return node;
	case TOK_IDENT:
		parse_advance(p);
		if (p->tok.kind == TOK_LPAREN) {
			node = parse_new(p, NODE_CALL, &tok);
			node->name = parse_token_text(p, &tok, 0);
			parse_advance(p);
			node->args = parse_expression_list(p, TOK_RPAREN,
							   "')' or ',' in function arguments");
			parse_advance(p);
			return node;
		}
		if ((tok.length == 4 && memcmp(tok.start, "true", 4) == 0) ||
		    (tok.length == 5 && memcmp(tok.start, "false", 5) == 0)) {
			/* a bool literal: an integer whose name says it is a bool */
			node = parse_new(p, NODE_INT, &tok);
			node->int_value = tok.length == 4;
			node->name = parse_token_text(p, &tok, 0);
			return node;
		}
		node = parse_new(p, NODE_BUILTIN, &tok);
		node->name = parse_token_text(p, &tok, 0);
		return node;
	case TOK_LPAREN:
		return parse_paren(p);
	case TOK_LBRACE:
		return parse_block_expression(p, "'{'");
	case TOK_IF:
		return parse_if_expression(p);
	case TOK_SIZEOF:
		return parse_sizeof(p);
	case TOK_OFFSETOF:
		return parse_offsetof(p);
	default:
		parse_fail_expected(p, "an expression");
	}
}

/* Tokens that may name a field after '.' or '->': identifiers and keywords. */
static bool parse_is_field_name(enum token_kind kind)
{
	return kind == TOK_IDENT || (kind >= TOK_IF && kind <= TOK_ENUM);
}

/* Is the token plain decimal digits, as a tuple index must be? */
static bool parse_is_plain_decimal(const struct token *tok)
{
	for (int i = 0; i < tok->length; i++)
		if (tok->start[i] < '0' || tok->start[i] > '9')
			return false;
	return tok->length > 0 && (tok->length == 1 || tok->start[0] != '0');
}

/*
 * postfix := primary { '[' args ']' | '.' IDENT | '.' INT | '->' IDENT | '++' | '--' }
 *
 * The first '[' after a map holds its keys; any later '[' indexes the value.
 */
static struct node *parse_postfix(struct parser *p)
{
	struct node *node = parse_primary(p);
	int saved_depth = p->depth;

	for (;;) {
		struct token op = p->tok;
		struct node *outer;

		if (op.kind == TOK_LBRACKET) {
			parse_advance(p);
			if (node->kind == NODE_MAP && !node->args) {
				if (p->tok.kind == TOK_RBRACKET)
					parse_fail_expected(p, "a map key");
				node->args = parse_expression_list(p, TOK_RBRACKET,
								   "']' or ',' after map key");
				parse_advance(p);
				continue;
			}
			outer = parse_new(p, NODE_INDEX, &op);
			outer->lhs = node;
			outer->rhs = parse_expression(p);
			parse_expect(p, TOK_RBRACKET, "']' after index");
		} else if (op.kind == TOK_DOT || op.kind == TOK_ARROW) {
			struct token member;

			parse_advance(p);
			member = p->tok;
			if (op.kind == TOK_DOT && member.kind == TOK_INT) {
				if (!parse_is_plain_decimal(&member))
					parse_fail_at(p, &member, "invalid tuple index");
				parse_advance(p);
				outer = parse_new(p, NODE_TUPLE_INDEX, &member);
				outer->int_value = member.int_value;
			} else {
				if (!parse_is_field_name(member.kind))
					parse_fail_expected(p, op.kind == TOK_DOT
							       ? "a field name or tuple index after '.'"
							       : "a field name after '->'");
				parse_advance(p);
				outer = parse_new(p, NODE_FIELD, &member);
				outer->name = parse_token_text(p, &member, 0);
				outer->is_arrow = op.kind == TOK_ARROW;
			}
			outer->lhs = node;
		} else if (op.kind == TOK_INC || op.kind == TOK_DEC) {
			parse_advance(p);
			outer = parse_new(p, NODE_INCDEC, &op);
			outer->op = op.kind == TOK_INC ? OP_INC : OP_DEC;
			outer->lhs = node;
		} else {
			break;
		}
		node = outer;
		/* Each suffix deepens the tree by one level. */
		parse_enter(p);
	}
	p->depth = saved_depth;
	return node;
}

/*
 * unary := ( '-' | '~' | '!' | '*' | '&' | '++' | '--' ) unary
 *        | '(' type ')' unary
 *        | postfix
 */
static struct node *parse_unary(struct parser *p)
{
	struct token op = p->tok;
	struct node *node;

	parse_enter(p);
	switch (op.kind) {
	case TOK_MINUS:
	case TOK_TILDE:
	case TOK_BANG:
	case TOK_STAR:
	case TOK_AMP:
		parse_advance(p);
		node = parse_new(p, NODE_UNARY, &op);
		node->op = op.kind == TOK_MINUS ? OP_NEG
			 : op.kind == TOK_TILDE ? OP_BITNOT
			 : op.kind == TOK_BANG  ? OP_LNOT
			 : op.kind == TOK_STAR  ? OP_DEREF
			 : OP_ADDR;
		node->lhs = parse_unary(p);
		break;
	case TOK_INC:
	case TOK_DEC:
		parse_advance(p);
		node = parse_new(p, NODE_INCDEC, &op);
		node->op = op.kind == TOK_INC ? OP_INC : OP_DEC;
		node->is_prefix = true;
		node->lhs = parse_unary(p);
		break;
	case TOK_LPAREN:
		if (parse_type_follows(p, 1, true)) {
			struct token close;
			char *name;

			parse_advance(p);
			name = parse_type_name(p);
			close = parse_expect(p, TOK_RPAREN, "')' after type name in cast");
			node = ast_new_node(p->ast, NODE_CAST, parse_span(&op, &close));
			node->name = name;
			node->lhs = parse_unary(p);
			break;
		}
		node = parse_postfix(p);
		break;
	default:
		node = parse_postfix(p);
		break;
	}
	parse_leave(p);
	return node;
}

/* Binding strength of a binary operator token (0: not a binary operator). */
static int parse_binary_precedence(enum token_kind kind, enum op *op)
{
	switch (kind) {
	case TOK_LOR:     *op = OP_LOR;    return 1;
	case TOK_LAND:    *op = OP_LAND;   return 2;
	case TOK_PIPE:    *op = OP_BITOR;  return 3;
	case TOK_CARET:   *op = OP_BITXOR; return 4;
	case TOK_AMP:     *op = OP_BITAND; return 5;
	case TOK_EQ:      *op = OP_EQ;     return 6;
	case TOK_NE:      *op = OP_NE;     return 6;
	case TOK_LT:      *op = OP_LT;     return 7;
	case TOK_LE:      *op = OP_LE;     return 7;
	case TOK_GT:      *op = OP_GT;     return 7;
	case TOK_GE:      *op = OP_GE;     return 7;
	case TOK_SHL:     *op = OP_SHL;    return 8;
	case TOK_SHR:     *op = OP_SHR;    return 8;
	case TOK_PLUS:    *op = OP_ADD;    return 9;
	case TOK_MINUS:   *op = OP_SUB;    return 9;
	case TOK_STAR:    *op = OP_MUL;    return 10;
	case TOK_SLASH:   *op = OP_DIV;    return 10;
	case TOK_PERCENT: *op = OP_MOD;    return 10;
	default:          *op = OP_NONE;   return 0;
	}
}

/*
 * binary(min) := unary { binop binary(prec(binop) + 1) }   while prec(binop) >= min
 *
 * The precedences, loosest first: || && | ^ & (== !=) (< <= > >=) (<< >>)
 * (+ -) (* / %); all left-associative.
 */
static struct node *parse_binary(struct parser *p, int min_precedence)
{
	struct node *lhs = parse_unary(p);
	int saved_depth = p->depth;

	for (;;) {
		enum op op;
		int precedence = parse_binary_precedence(p->tok.kind, &op);
		struct token op_tok = p->tok;
		struct node *node;

		if (precedence == 0 || precedence < min_precedence)
			break;
		/* A long chain `a + b + c ...` is a deep left-leaning tree. */
		parse_enter(p);
		parse_advance(p);
		node = parse_new(p, NODE_BINARY, &op_tok);
		node->op = op;
		node->lhs = lhs;
		node->rhs = parse_binary(p, precedence + 1);
		lhs = node;
	}
	p->depth = saved_depth;
	return lhs;
}

/* ternary := binary(1) [ '?' expression ':' ternary ] */
static struct node *parse_ternary(struct parser *p)
{
	struct node *cond = parse_binary(p, 1);
	struct token question = p->tok;
	struct node *node;

	if (question.kind != TOK_QUESTION)
		return cond;
	parse_enter(p);
	parse_advance(p);
	node = parse_new(p, NODE_TERNARY, &question);
	node->cond = cond;
	node->lhs = parse_expression(p);
	parse_expect(p, TOK_COLON, "':' in conditional expression");
	node->rhs = parse_ternary(p);
	parse_leave(p);
	return node;
}

/* expression := ternary */
struct node *parse_expression(struct parser *p)
{
	return parse_ternary(p);
}

/* ---- statements ---- */

/*
 * block := '{' { statement [ ';' ] } '}'
 *
 * Returns the statement list. A statement that ends in a block (if, while,
 * for, unroll, a nested block) needs no ';' after it; every other
 * statement must be followed by ';' or by the closing '}'. Stray ';' are
 * accepted as empty statements.
 *
 * With value non-NULL, a last statement that is an expression with no ';'
 * after it is the block's value: it is taken off the list into *value
 * (NULL when the block ends otherwise), as current bpftrace's block
 * expressions and macro bodies have it.
 */
struct node *parse_block_items(struct parser *p, const char *what, struct node **value)
{
	struct token open;
	struct node *list = NULL;
	struct node **tail = &list;
	struct node **last = NULL;
	bool bare = false;

	if (p->tok.kind != TOK_LBRACE)
		parse_fail_expected(p, what);
	open = parse_advance(p);
	parse_enter(p);
	for (;;) {
		bool needs_separator;

		while (parse_accept(p, TOK_SEMICOLON))
			bare = false;
		if (p->tok.kind == TOK_RBRACE)
			break;
		/* The '{' is more useful to point at than the end of the file. */
		if (p->tok.kind == TOK_EOF)
			parse_fail_at(p, &open, "unterminated block: expected '}' before end of input");
		last = tail;
		*tail = parse_statement(p, &needs_separator);
		tail = &(*tail)->next;
		if (needs_separator && p->tok.kind != TOK_SEMICOLON && p->tok.kind != TOK_RBRACE)
			parse_fail_expected(p, "';' or '}' after statement");
		bare = needs_separator && p->tok.kind == TOK_RBRACE;
	}
	parse_leave(p);
	if (value) {
		*value = NULL;
		if (bare && last && (*last)->kind == NODE_EXPR_STMT) {
			*value = (*last)->lhs;
			*last = NULL;
		}
	}
	/* The caller consumes '}': after a probe body, a probe comes next. */
	return list;
}

static struct node *parse_block(struct parser *p, const char *what)
{
	return parse_block_items(p, what, NULL);
}

/* A nested block: parse_block plus its closing '}'. */
static struct node *parse_inner_block(struct parser *p, const char *what)
{
	struct node *list = parse_block(p, what);

	parse_advance(p);
	return list;
}

/* condition := expression: bpftrace 0.17 wrote it in parentheses, which are
 * then the expression's own; current bpftrace also takes `if c { }`. */
static struct node *parse_condition(struct parser *p, const char *keyword)
{
	if (p->tok.kind == TOK_LBRACE) {
		char what[64];

		snprintf(what, sizeof(what), "a condition after '%s'", keyword);
		parse_fail_expected(p, what);
	}
	return parse_expression(p);
}

/*
 * if := 'if' condition block [ 'else' ( if | block ) ]
 *
 * `else if` chains are built iteratively, each if hanging from the
 * previous one's els, so a long chain does not recurse.
 */
static struct node *parse_if(struct parser *p)
{
	struct token keyword = parse_advance(p);
	struct node *first = parse_new(p, NODE_IF, &keyword);
	struct node *node = first;
	int saved_depth = p->depth;

	for (;;) {
		node->cond = parse_condition(p, "if");
		node->then = parse_inner_block(p, "'{' after if condition");
		if (!parse_accept(p, TOK_ELSE))
			break;
		if (p->tok.kind == TOK_IF) {
			struct token next = parse_advance(p);

			parse_enter(p);
			node->els = parse_new(p, NODE_IF, &next);
			node = node->els;
			continue;
		}
		node->els = parse_inner_block(p, "'{' or 'if' after 'else'");
		break;
	}
	p->depth = saved_depth;
	return first;
}

/* while := 'while' condition block */
static struct node *parse_while(struct parser *p)
{
	struct token keyword = parse_advance(p);
	struct node *node = parse_new(p, NODE_WHILE, &keyword);

	node->cond = parse_condition(p, "while");
	node->body = parse_inner_block(p, "'{' after while condition");
	return node;
}

/* unroll := 'unroll' '(' expression ')' block */
static struct node *parse_unroll(struct parser *p)
{
	struct token keyword = parse_advance(p);
	struct node *node = parse_new(p, NODE_UNROLL, &keyword);

	parse_expect(p, TOK_LPAREN, "'(' after 'unroll'");
	node->lhs = parse_expression(p);
	parse_expect(p, TOK_RPAREN, "')' after unroll count");
	node->body = parse_inner_block(p, "'{' after unroll count");
	return node;
}

/*
 * for := 'for' '(' VAR ':' MAP ')' block
 *      | 'for' '(' VAR ':' expression '..' expression ')' block
 */
static struct node *parse_for(struct parser *p)
{
	struct token keyword = parse_advance(p);
	struct node *node = parse_new(p, NODE_FOR_MAP, &keyword);
	struct token var;
	struct node *source;

	parse_expect(p, TOK_LPAREN, "'(' after 'for'");
	if (p->tok.kind != TOK_VAR)
		parse_fail_expected(p, "a $variable after 'for ('");
	var = parse_advance(p);
	node->lhs = parse_new(p, NODE_VAR, &var);
	node->lhs->name = parse_token_text(p, &var, 1);
	parse_expect(p, TOK_COLON, "':' after the loop variable");
	source = parse_expression(p);
	if (parse_accept(p, TOK_DOTDOT)) {
		node->kind = NODE_FOR_RANGE;
		node->cond = source;
		node->rhs = parse_expression(p);
	} else if (source->kind == NODE_MAP && !source->args) {
		node->rhs = source;
	} else if (p->tok.kind == TOK_RPAREN) {
		parse_fail_node(p, source, "for loop needs a map without keys or a range 'start..end'");
	} else {
		parse_fail_expected(p, "'..' or ')' in for loop");
	}
	parse_expect(p, TOK_RPAREN, "')' after for loop range");
	node->body = parse_inner_block(p, "'{' after for (...)");
	return node;
}

static enum op parse_assign_op(enum token_kind kind)
{
	switch (kind) {
	case TOK_ASSIGN:     return OP_ASSIGN;
	case TOK_ADD_ASSIGN: return OP_ADD;
	case TOK_SUB_ASSIGN: return OP_SUB;
	case TOK_MUL_ASSIGN: return OP_MUL;
	case TOK_DIV_ASSIGN: return OP_DIV;
	case TOK_MOD_ASSIGN: return OP_MOD;
	case TOK_AND_ASSIGN: return OP_BITAND;
	case TOK_OR_ASSIGN:  return OP_BITOR;
	case TOK_XOR_ASSIGN: return OP_BITXOR;
	case TOK_SHL_ASSIGN: return OP_SHL;
	case TOK_SHR_ASSIGN: return OP_SHR;
	default:             return OP_NONE;
	}
}

/*
 * let := 'let' VAR [ ':' type ] [ '=' expression ]
 *
 * A declaration is an assignment whose rhs may be missing; a declared type
 * is kept as the assignment's name.
 */
static struct node *parse_let(struct parser *p)
{
	struct token var;
	struct token op;
	struct node *node;
	char *type_name = NULL;

	parse_advance(p);
	if (p->tok.kind != TOK_VAR)
		parse_fail_expected(p, "a $variable after 'let'");
	var = parse_advance(p);
	if (parse_accept(p, TOK_COLON))
		type_name = parse_type_name(p);
	op = p->tok;
	node = parse_new(p, NODE_ASSIGN, p->tok.kind == TOK_ASSIGN ? &op : &var);
	node->op = OP_ASSIGN;
	node->is_declaration = true;
	node->name = type_name;
	node->lhs = parse_new(p, NODE_VAR, &var);
	node->lhs->name = parse_token_text(p, &var, 1);
	if (parse_accept(p, TOK_ASSIGN))
		node->rhs = parse_expression(p);
	return node;
}

/*
 * statement := block | if | while | for | unroll | let
 *            | 'break' | 'continue' | 'return'
 *            | expression [ assign-op expression ]
 *
 * *needs_separator tells the caller whether ';' or '}' must follow.
 */
static struct node *parse_statement(struct parser *p, bool *needs_separator)
{
	struct token tok = p->tok;
	struct node *node;
	struct node *expr;
	enum op op;

	*needs_separator = false;
	parse_enter(p);
	switch (tok.kind) {
	case TOK_LBRACE:
		node = parse_new(p, NODE_BLOCK, &tok);
		node->body = parse_inner_block(p, "'{'");
		break;
	case TOK_IF:
		node = parse_if(p);
		break;
	case TOK_WHILE:
		node = parse_while(p);
		break;
	case TOK_FOR:
		node = parse_for(p);
		break;
	case TOK_UNROLL:
		node = parse_unroll(p);
		break;
	case TOK_BREAK:
	case TOK_CONTINUE:
	case TOK_RETURN:
		parse_advance(p);
		node = parse_new(p, tok.kind == TOK_BREAK ? NODE_BREAK
				    : tok.kind == TOK_CONTINUE ? NODE_CONTINUE : NODE_RETURN, &tok);
		*needs_separator = true;
		break;
	case TOK_LET:
		node = parse_let(p);
		*needs_separator = true;
		break;
	default:
		expr = parse_expression(p);
		op = parse_assign_op(p->tok.kind);
		*needs_separator = true;
		if (op == OP_NONE) {
			node = ast_new_node(p->ast, NODE_EXPR_STMT, expr->loc);
			node->lhs = expr;
			break;
		}
		/* Pointed at the operator: that is where the statement goes wrong. */
		if (expr->kind != NODE_VAR && expr->kind != NODE_MAP)
			parse_fail_at(p, &p->tok,
				      "cannot assign to this expression: the left side of '%.*s' "
				      "must be a $variable or @map", p->tok.length, p->tok.start);
		node = parse_new(p, NODE_ASSIGN, &p->tok);
		node->op = op;
		node->lhs = expr;
		parse_advance(p);
		node->rhs = parse_expression(p);
		break;
	}
	parse_leave(p);
	return node;
}

/* ---- probes ---- */

/*
 * probe := spec { ',' spec } [ '/' expression '/' ] '{' { statement } '}'
 *
 * On entry the current token is the first spec (lexed in probe mode); on
 * return it is whatever follows the closing '}', again in probe mode.
 */
static struct node *parse_probe(struct parser *p)
{
	struct node *probe = parse_new(p, NODE_PROBE, &p->tok);
	struct node **tail = &probe->args;

	for (;;) {
		struct token spec = p->tok;

		*tail = parse_new(p, NODE_PROBE_SPEC, &spec);
		(*tail)->name = parse_token_text(p, &spec, 0);
		tail = &(*tail)->next;
		parse_advance(p);
		if (p->tok.kind != TOK_COMMA)
			break;
		parse_advance_to_probe(p);
		if (p->tok.kind != TOK_PROBE_SPEC)
			parse_fail_expected(p, "a probe after ','");
	}
	if (p->tok.kind == TOK_SLASH) {
		parse_advance(p);
		probe->predicate = parse_expression(p);
		if (p->tok.kind != TOK_PRED_END)
			parse_fail_expected(p, "'/' to end the predicate");
		parse_advance(p);
	}
	probe->body = parse_block(p, probe->predicate ? "'{' after predicate"
						      : "'{' after probe list");
	parse_advance_to_probe(p);
	return probe;
}

/* Action blocks in one program. Each becomes at least one BPF program, that
 * is one file descriptor (the runtime raises RLIMIT_NOFILE to its hard
 * limit, often 1024 or 524288) and a compile of its own; no real script
 * comes near this, and past it compile time and memory grow for nothing. */
#define MAX_PROBE_BLOCKS 4096

/*
 * program := [ config ] { preamble | definition } probe { probe | definition | macro }
 *
 * *ast is reset first; on failure it still owns whatever was built, and
 * the caller releases it with ast_free() either way.
 */
int parse_program(const struct source *source, struct ast *ast, struct diag *diag)
{
	struct parser parser;
	struct parser *p = &parser;
	struct node **tail;

	memset(ast, 0, sizeof(*ast));
	memset(p, 0, sizeof(*p));
	p->ast = ast;
	p->diag = diag;
	lex_init(&p->lexer, source->text ? source->text : "");
	tail = &ast->probes;

	if (setjmp(p->fail))
		return -1;
	p->tok = lex_probe_spec(&p->lexer);
	struct node **definitions = &ast->definitions;
	for (int count = 0; p->tok.kind != TOK_EOF; count++) {
		if (parse_preamble(p, count)) {
			count--;
			continue;
		}
		if (parse_is_record_keyword(p->tok.kind) || parse_is_word(&p->tok, "typedef") ||
		    p->tok.kind == TOK_LET) {
			struct node *definition = p->tok.kind == TOK_LET ? parse_map_declaration(p)
									  : parse_c_definition(p);
			if (definition) {
				*definitions = definition;
				definitions = &definition->next;
			}
			count--;
			continue;
		}
		if (p->tok.kind != TOK_PROBE_SPEC)
			parse_fail_expected(p, "a probe");
		if (count == MAX_PROBE_BLOCKS) {
			/* stop here: parsing the rest would cost what the limit saves */
			diag_error(diag, p->tok.loc, "too many probes (this is probe %d; at most %d "
				   "in one program)", count + 1, MAX_PROBE_BLOCKS);
			return -1;
		}
		*tail = parse_probe(p);
		tail = &(*tail)->next;
	}
	if (!ast->probes) {
		diag_error_noloc(diag, "no probes in program");
		return -1;
	}
	return macro_expand_all(ast, diag);
}

int parse_expression_alone(const struct source *source, struct ast *ast, struct node **out,
			   struct diag *diag)
{
	struct parser parser;
	struct parser *p = &parser;

	memset(ast, 0, sizeof(*ast));
	memset(p, 0, sizeof(*p));
	p->ast = ast;
	p->diag = diag;
	lex_init(&p->lexer, source->text ? source->text : "");
	*out = NULL;
	if (setjmp(p->fail))
		return -1;
	p->tok = lex_next(&p->lexer);
	struct node *expression = parse_expression(p);
	if (p->tok.kind != TOK_EOF)
		parse_fail_expected(p, "the end of the expression");
	*out = expression;
	return 0;
}
