/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The parts of a program outside its probes: C struct, union, enum and
 * typedef definitions, map declarations (`let @m = hash(n)`), the config
 * block, macro definitions, and the words of current bpftrace's preamble that sonde names
 * rather than misreads as a probe. parse.c's parse_program() calls in here
 * whenever the token at the top level is not a probe specifier.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "compiler/parse_internal.h"

/* ---- C definitions ---- */

bool parse_is_word(const struct token *tok, const char *word)
{
	return tok->kind == TOK_IDENT && (size_t)tok->length == strlen(word) &&
	       memcmp(tok->start, word, (size_t)tok->length) == 0;
}

/* Qualifiers that change nothing for a reader of memory. */
static bool parse_is_qualifier(const struct token *tok)
{
	return parse_is_word(tok, "const") || parse_is_word(tok, "volatile") ||
	       parse_is_word(tok, "restrict");
}

static void parse_skip_qualifiers(struct parser *p)
{
	while (parse_is_qualifier(&p->tok))
		parse_advance(p);
}

static struct node *parse_c_record_or_enum(struct parser *p, char *spelling, size_t size);

/*
 * attributes := { ('__attribute__' | '__attribute') '(' '(' [ attribute { ',' attribute } ] ')' ')' }
 * attribute  := ('packed' | '__packed__')
 *             | ('aligned' | '__aligned__') [ '(' expression ')' ]
 *
 * gcc's two attributes that change a layout, in the places gcc reads them
 * (after `struct`, after the closing brace, after a field's declarator).
 * The packed flag goes in target->int_value, the alignment expression in
 * target->cond (a bare `aligned` is x86-64's largest alignment, 16). Any
 * other attribute is an error: sonde cannot tell whether it moves a field.
 */
static void parse_c_attributes(struct parser *p, struct node *target)
{
	while (parse_is_word(&p->tok, "__attribute__") || parse_is_word(&p->tok, "__attribute")) {
		parse_advance(p);
		parse_expect(p, TOK_LPAREN, "'((' after __attribute__");
		parse_expect(p, TOK_LPAREN, "'((' after __attribute__");
		while (p->tok.kind != TOK_RPAREN) {
			struct token name = p->tok;
			if (name.kind != TOK_IDENT)
				parse_fail_expected(p, "an attribute name (packed or aligned)");
			parse_advance(p);
			if (parse_is_word(&name, "packed") || parse_is_word(&name, "__packed__")) {
				target->int_value = 1;
			} else if (parse_is_word(&name, "aligned") || parse_is_word(&name, "__aligned__")) {
				if (parse_accept(p, TOK_LPAREN)) {
					target->cond = parse_expression(p);
					parse_expect(p, TOK_RPAREN, "')' after the alignment");
				} else {
					target->cond = parse_new(p, NODE_INT, &name);
					target->cond->int_value = 16;
				}
			} else {
				parse_fail_at(p, &name, "attribute '%.*s' is not supported in a definition "
					      "(packed and aligned are)", name.length, name.start);
			}
			if (!parse_accept(p, TOK_COMMA) && p->tok.kind != TOK_RPAREN)
				parse_fail_expected(p, "',' or '))' after the attribute");
		}
		parse_advance(p);
		parse_expect(p, TOK_RPAREN, "'))' to end the attributes");
	}
}

/*
 * type-spec := { qualifier } ( ('struct' | 'union' | 'enum') [ IDENT ] [ '{' ... '}' ]
 *                            | IDENT { C-base-word } ) { qualifier }
 *
 * Writes the spelling ("struct foo", "unsigned int") into spelling and
 * returns a record or enum defined in place, or NULL.
 */
static struct node *parse_c_type_spec(struct parser *p, char *spelling, size_t size)
{
	struct node *defined = NULL;

	spelling[0] = '\0';
	parse_skip_qualifiers(p);
	if (parse_is_record_keyword(p->tok.kind)) {
		defined = parse_c_record_or_enum(p, spelling, size);
	} else if (p->tok.kind == TOK_IDENT) {
		bool combines = parse_is_c_base_word(&p->tok);
		struct token tok = parse_advance(p);

		parse_type_append(p, spelling, size, tok.start, tok.length);
		while (combines && (parse_is_c_base_word(&p->tok) || parse_is_qualifier(&p->tok))) {
			tok = parse_advance(p);
			if (parse_is_qualifier(&tok))
				continue;
			parse_type_append(p, spelling, size, " ", 1);
			parse_type_append(p, spelling, size, tok.start, tok.length);
		}
	} else {
		parse_fail_expected(p, "a type");
	}
	parse_skip_qualifiers(p);
	return defined;
}

/*
 * declarator := { '*' { qualifier } } ( IDENT | '(' '*' IDENT ')' '(' ... ')' )
 *               { '[' expression ']' } [ ':' expression ]
 *
 * A function pointer is kept as a `void *`: nothing reads through it.
 */
static struct node *parse_c_declarator(struct parser *p, const char *spec, struct node *defined,
				       bool allow_bitfield)
{
	char name[300];
	struct token at = p->tok;
	struct node *field = parse_new(p, NODE_C_FIELD, &at);
	struct node **dims = &field->args;
	int stars = 0;

	snprintf(name, sizeof(name), "%s", spec);
	while (parse_accept(p, TOK_STAR)) {
		stars++;
		parse_skip_qualifiers(p);
	}
	if (p->tok.kind == TOK_LPAREN && parse_peek(p, 1).kind == TOK_STAR) {
		int depth = 0;

		parse_advance(p);
		parse_advance(p);
		if (p->tok.kind != TOK_IDENT)
			parse_fail_expected(p, "a name in the function pointer");
		field->string_value = parse_token_text(p, &p->tok, 0);
		parse_advance(p);
		parse_expect(p, TOK_RPAREN, "')' after the function pointer's name");
		if (p->tok.kind != TOK_LPAREN)
			parse_fail_expected(p, "'(' and the function pointer's parameters");
		do {
			if (p->tok.kind == TOK_EOF)
				parse_fail_expected(p, "')' to end the parameters");
			depth += p->tok.kind == TOK_LPAREN ? 1 : p->tok.kind == TOK_RPAREN ? -1 : 0;
			parse_advance(p);
		} while (depth > 0);
		field->name = ast_strdup(p->ast, "void *", 6);
		return field;
	}
	if (p->tok.kind == TOK_IDENT) {
		struct token tok = parse_advance(p);
		field->string_value = parse_token_text(p, &tok, 0);
		field->loc = tok.loc;
	} else if (!(allow_bitfield && p->tok.kind == TOK_COLON) && !(defined && stars == 0)) {
		parse_fail_expected(p, "a field name");
	}
	if (stars > 0) {
		size_t used = strlen(name);
		snprintf(name + used, sizeof(name) - used, " %.*s", stars, "****************");
		if (stars > 16)
			parse_fail_at(p, &at, "too many '*' in a declaration");
	}
	field->name = ast_strdup(p->ast, name, strlen(name));
	field->lhs = defined;
	while (p->tok.kind == TOK_LBRACKET) {
		struct token open = parse_advance(p);
		/* a flexible array member (`char data[]`) occupies no bytes */
		*dims = p->tok.kind == TOK_RBRACKET ? parse_new(p, NODE_INT, &open) : parse_expression(p);
		dims = &(*dims)->next;
		parse_expect(p, TOK_RBRACKET, "']' after the array length");
	}
	if (allow_bitfield && parse_accept(p, TOK_COLON))
		field->rhs = parse_expression(p);
	parse_c_attributes(p, field);
	return field;
}

/* fields := { type-spec declarator { ',' declarator } ';' } '}' */
static struct node *parse_c_fields(struct parser *p)
{
	struct node *list = NULL;
	struct node **tail = &list;
	char spec[256];

	while (p->tok.kind != TOK_RBRACE) {
		if (p->tok.kind == TOK_EOF)
			parse_fail_expected(p, "'}' to end the definition");
		if (parse_accept(p, TOK_SEMICOLON))
			continue;
		struct node *defined = parse_c_type_spec(p, spec, sizeof(spec));
		if (defined && p->tok.kind == TOK_SEMICOLON) {
			/* an anonymous struct or union: its fields are the parent's */
			struct node *field = parse_new(p, NODE_C_FIELD, &p->tok);
			field->name = defined->name;
			field->lhs = defined;
			*tail = field;
			tail = &field->next;
			parse_advance(p);
			continue;
		}
		for (;;) {
			*tail = parse_c_declarator(p, spec, defined, true);
			tail = &(*tail)->next;
			if (!parse_accept(p, TOK_COMMA))
				break;
		}
		parse_expect(p, TOK_SEMICOLON, "';' after the field");
	}
	parse_advance(p);
	return list;
}

/* enumerators := enumerator { ',' enumerator } [ ',' ] '}'
 * enumerator := IDENT [ '=' expression ] */
static struct node *parse_c_enumerators(struct parser *p)
{
	struct node *list = NULL;
	struct node **tail = &list;

	while (p->tok.kind != TOK_RBRACE) {
		if (p->tok.kind != TOK_IDENT)
			parse_fail_expected(p, "an enumerator name or '}'");
		struct token tok = parse_advance(p);
		struct node *item = parse_new(p, NODE_C_ENUMERATOR, &tok);
		item->name = parse_token_text(p, &tok, 0);
		if (parse_accept(p, TOK_ASSIGN))
			item->lhs = parse_expression(p);
		*tail = item;
		tail = &item->next;
		if (!parse_accept(p, TOK_COMMA) && p->tok.kind != TOK_RBRACE)
			parse_fail_expected(p, "',' or '}' after the enumerator");
	}
	parse_advance(p);
	return list;
}

/*
 * record-or-enum := ('struct' | 'union') [ IDENT ] [ '{' fields ]
 *                 | 'enum' [ IDENT ] [ '{' enumerators ]
 *
 * Writes the spelling into spelling; returns the definition if there is a
 * body, else NULL (a reference to a type defined elsewhere).
 */
static struct node *parse_c_record_or_enum(struct parser *p, char *spelling, size_t size)
{
	struct token keyword = parse_advance(p);
	struct node *node;
	struct node attributes = { .kind = NODE_C_RECORD };

	spelling[0] = '\0';
	parse_type_append(p, spelling, size, keyword.start, keyword.length);
	parse_c_attributes(p, &attributes);
	if (p->tok.kind == TOK_IDENT) {
		struct token tok = parse_advance(p);
		parse_type_append(p, spelling, size, " ", 1);
		parse_type_append(p, spelling, size, tok.start, tok.length);
	} else if (p->tok.kind != TOK_LBRACE) {
		parse_fail_expected(p, "a name or '{' after the keyword");
	}
	if (p->tok.kind != TOK_LBRACE)
		return NULL;
	parse_advance(p);
	parse_enter(p);
	node = parse_new(p, keyword.kind == TOK_ENUM ? NODE_C_ENUM : NODE_C_RECORD, &keyword);
	node->name = ast_strdup(p->ast, spelling, strlen(spelling));
	node->args = keyword.kind == TOK_ENUM ? parse_c_enumerators(p) : parse_c_fields(p);
	node->int_value = attributes.int_value;
	node->cond = attributes.cond;
	parse_c_attributes(p, node);
	parse_leave(p);
	return node;
}

/*
 * definition := record-or-enum [ ';' ]
 *             | 'typedef' type-spec declarator ';'
 *
 * On entry the current token is the keyword; on return the current token
 * is what follows the definition, lexed in probe mode. bpftrace accepts a
 * definition without its ';' before a probe, so the ';' is optional.
 * Returns NULL for a declaration that defines nothing (`struct foo;`).
 */
struct node *parse_c_definition(struct parser *p)
{
	char spec[256];
	struct node *node;

	parse_enter(p);
	if (parse_is_word(&p->tok, "typedef")) {
		struct token keyword = parse_advance(p);
		struct node *defined = parse_c_type_spec(p, spec, sizeof(spec));

		node = parse_new(p, NODE_C_TYPEDEF, &keyword);
		node->lhs = parse_c_declarator(p, spec, defined, false);
		if (!node->lhs->string_value)
			parse_fail_expected(p, "the typedef's name");
		if (p->tok.kind != TOK_SEMICOLON)
			parse_fail_expected(p, "';' after the typedef");
		parse_advance_to_probe(p);
	} else {
		struct token keyword = p->tok;

		node = parse_c_record_or_enum(p, spec, sizeof(spec));
		if (!node && p->tok.kind != TOK_SEMICOLON)
			parse_fail_at(p, &keyword, "expected '{' and a body, or ';', after '%s'", spec);
		if (p->tok.kind == TOK_SEMICOLON) {
			parse_advance_to_probe(p);
		} else {
			/* the token after '}' was lexed as an expression token: again, as a probe */
			p->lexer.pos = p->tok.start;
			p->tok = lex_probe_spec(&p->lexer);
		}
	}
	parse_leave(p);
	return node;
}

/*
 * map-declaration := 'let' MAP '=' IDENT '(' expression ')' [ ';' ]
 *
 * As current bpftrace: `let @m = lruhash(100);` before the probes. On
 * return the current token is what follows, lexed in probe mode.
 */
struct node *parse_map_declaration(struct parser *p)
{
	struct token keyword = parse_advance(p);
	struct node *node;

	if (p->tok.kind != TOK_MAP)
		parse_fail_expected(p, "a @map after 'let' (a $variable is declared inside a probe)");
	struct token map = parse_advance(p);
	node = parse_new(p, NODE_MAP_DECL, &map);
	node->name = parse_token_text(p, &map, 0);
	parse_expect(p, TOK_ASSIGN, "'=' and the map's kind after the map's name");
	if (p->tok.kind != TOK_IDENT)
		parse_fail_expected(p, "a map kind (hash, lruhash, percpuhash, percpulruhash)");
	struct token kind = parse_advance(p);
	node->string_value = parse_token_text(p, &kind, 0);
	node->string_length = kind.length;
	parse_expect(p, TOK_LPAREN, "'(' and the map's number of entries");
	node->lhs = parse_expression(p);
	if (p->tok.kind != TOK_RPAREN)
		parse_fail_expected(p, "')' after the number of entries");
	(void)keyword;
	parse_advance_to_probe(p);
	if (p->tok.kind == TOK_SEMICOLON)
		parse_advance_to_probe(p);
	return node;
}

/* ---- the preamble ---- */

/*
 * config := 'config' '=' '{' [ item { ';' item } [ ';' ] ] '}'
 * item   := IDENT '=' ( INT | STRING | IDENT )
 *
 * On entry the current token is the `config` word (lexed as a probe); the
 * keys are checked against the settings table later (compiler.c), where an
 * unknown one is reported at its place.
 */
static void parse_config(struct parser *p)
{
	struct node **tail = &p->ast->config;

	parse_advance(p);
	parse_expect(p, TOK_ASSIGN, "'=' after config");
	parse_expect(p, TOK_LBRACE, "'{' to open the config block");
	while (p->tok.kind != TOK_RBRACE) {
		struct token key = p->tok;
		if (key.kind != TOK_IDENT)
			parse_fail_expected(p, "a config key such as max_strlen");
		parse_advance(p);
		struct node *item = parse_new(p, NODE_ASSIGN, &key);
		item->op = OP_NONE;
		item->lhs = parse_new(p, NODE_BUILTIN, &key);
		item->lhs->name = parse_token_text(p, &key, 0);
		parse_expect(p, TOK_ASSIGN, "'=' after the config key");
		struct token value = p->tok;
		if (value.kind == TOK_INT) {
			parse_advance(p);
			item->rhs = parse_new(p, NODE_INT, &value);
			item->rhs->int_value = value.int_value;
		} else if (value.kind == TOK_STRING) {
			item->rhs = parse_string(p);
		} else if (value.kind == TOK_IDENT) {
			parse_advance(p);
			item->rhs = parse_new(p, NODE_BUILTIN, &value);
			item->rhs->name = parse_token_text(p, &value, 0);
		} else {
			parse_fail_expected(p, "a number, a string or a word as the config value");
		}
		*tail = item;
		tail = &item->next;
		if (!parse_accept(p, TOK_SEMICOLON) && p->tok.kind != TOK_RBRACE)
			parse_fail_expected(p, "';' or '}' after the config value");
	}
	parse_advance_to_probe(p);
}

/*
 * macro := 'macro' IDENT '(' [ param { ',' param } ] ')' '{' { statement } [ expression ] '}'
 * param := VAR | MAP | IDENT
 *
 * Current bpftrace's macros. On entry the current token is the `macro`
 * word (lexed as a probe); the definition joins ast->macros, expanded
 * where it is called once the whole program is read (macro.c).
 */
static void parse_macro(struct parser *p)
{
	parse_advance(p);
	if (p->tok.kind != TOK_IDENT)
		parse_fail_expected(p, "the macro's name after 'macro'");
	struct token name = parse_advance(p);
	struct node *macro = parse_new(p, NODE_MACRO, &name);
	macro->name = parse_token_text(p, &name, 0);
	parse_expect(p, TOK_LPAREN, "'(' and the macro's parameters after its name");
	struct node **tail = &macro->args;
	while (p->tok.kind != TOK_RPAREN) {
		struct token param = p->tok;
		if (param.kind == TOK_VAR) {
			*tail = parse_new(p, NODE_VAR, &param);
			(*tail)->name = parse_token_text(p, &param, 1);
		} else if (param.kind == TOK_MAP) {
			*tail = parse_new(p, NODE_MAP, &param);
			(*tail)->name = parse_token_text(p, &param, 0);
		} else if (param.kind == TOK_IDENT) {
			*tail = parse_new(p, NODE_BUILTIN, &param);
			(*tail)->name = parse_token_text(p, &param, 0);
		} else {
			parse_fail_expected(p, "a parameter ($variable, @map or name)");
		}
		parse_advance(p);
		tail = &(*tail)->next;
		if (!parse_accept(p, TOK_COMMA) && p->tok.kind != TOK_RPAREN)
			parse_fail_expected(p, "',' or ')' after a macro parameter");
	}
	parse_advance(p);
	macro->body = parse_block_items(p, "'{' to open the macro's body", &macro->lhs);
	parse_advance_to_probe(p);
	struct node **link = &p->ast->macros;
	while (*link)
		link = &(*link)->next;
	*link = macro;
}

/*
 * Words that start a construct of current bpftrace's preamble which sonde
 * does not have: a probe list cannot go on after them, so they are named
 * rather than reported as a malformed probe.
 */
static const struct unsupported_word {
	const char *word;
	const char *message;
} parse_unsupported_words[] = {
	{ "import", "import is not supported: sonde has no modules to import" },
	{ "fn", "function definitions (fn) are not supported" },
};

/* The preamble word the current token is, when a probe list cannot follow:
 * handled (config) or reported (the unsupported ones). */
bool parse_preamble(struct parser *p, int probes_so_far)
{
	struct token word = p->tok;
	struct lexer ahead = p->lexer;
	struct token next = lex_next(&ahead);

	if (word.kind != TOK_PROBE_SPEC || next.kind == TOK_LBRACE || next.kind == TOK_COMMA ||
	    next.kind == TOK_SLASH || next.kind == TOK_EOF)
		return false;
	if (word.length == 6 && memcmp(word.start, "config", 6) == 0 && next.kind == TOK_ASSIGN) {
		if (probes_so_far > 0 || p->ast->config)
			parse_fail_at(p, &word, "a config block must come first, before any probe, "
				      "and only once");
		parse_config(p);
		return true;
	}
	if (word.length == 5 && memcmp(word.start, "macro", 5) == 0) {
		parse_macro(p);
		return true;
	}
	for (size_t i = 0; i < sizeof(parse_unsupported_words) / sizeof(parse_unsupported_words[0]);
	     i++) {
		const char *text = parse_unsupported_words[i].word;
		if ((size_t)word.length == strlen(text) && memcmp(word.start, text, word.length) == 0)
			parse_fail_at(p, &word, "%s", parse_unsupported_words[i].message);
	}
	return false;
}
