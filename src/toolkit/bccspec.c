/* SPDX-License-Identifier: Apache-2.0 */
/*
 * BCC probe specifiers (bccspec.h): reading them, expanding their wildcards
 * and regular expressions, and translating BCC's expressions.
 *
 * Expansion asks sonde's own providers (provider.h) for the probes a glob
 * matches, so "u:libc:mall*" finds exactly the functions a sonde program
 * written `uprobe:libc:mall*` would; a regular expression expands the
 * widest glob and keeps the names it matches. Each match becomes one
 * explicit probe, because the tools print the name of each (funccount's
 * FUNC column) and the count tells the user how much they asked for.
 *
 * `u:` means a USDT probe in BCC. sonde's users also write it for a user
 * function (as bpftrace's `u:` is a uprobe), so a `u:lib:name` that names no
 * USDT probe of lib is read as the function; docs/compat.md says so.
 *
 * An expression becomes part of a generated program, so it is never pasted
 * as text: sonde's lexer reads it token by token (renaming BCC's words and
 * refusing any token that could end the expression or change state), the
 * parser must find exactly one expression in the result, and a compile of
 * it alone on the probe checks its names and types. Each piece of the
 * translation remembers where it came from, so every error is shown under
 * the user's specifier, never at a line of generated code.
 */
#include "bccspec.h"

#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compiler/ast.h"
#include "../compiler/compiler.h"
#include "../compiler/lex.h"
#include "../probes/provider.h"

static char *trim_copy(const char *start, const char *end)
{
	while (start < end && isspace((unsigned char)*start))
		start++;
	while (end > start && isspace((unsigned char)end[-1]))
		end--;
	return xstrndup(start, (size_t)(end - start));
}

/* ---- the probe part ---- */

/* [type:][lib:]function; the type is one of p r t u U. */
int bcc_probe_parse(const char *text, size_t length, unsigned flags, struct bcc_probe *out,
		    char **error)
{
	char *spec = trim_copy(text, text + length);
	char *parts[4];
	int count = 0;
	int status = 0;

	memset(out, 0, sizeof(*out));
	for (char *at = spec; count < 4;) {
		parts[count++] = at;
		char *colon = strchr(at, ':');
		if (!colon)
			break;
		*colon = '\0';
		at = colon + 1;
	}
	const char *type = count == 3 || count == 4 ? parts[0] : NULL;
	bool typed = type && strlen(type) == 1 && strchr("prtuU", type[0]);
	if (!spec[0]) {
		*error = xstrdup("a probe specifier is empty");
		status = -EINVAL;
	} else if (count == 4 && (!typed || (type[0] != 'u' && type[0] != 'U'))) {
		*error = xasprintf("'%.*s' has too many ':'-separated parts", (int)length, text);
		status = -EINVAL;
	} else if (count == 1) {
		out->kind = BCC_KPROBE;
		out->function = xstrdup(parts[0]);
	} else if (count == 2) {
		if (strlen(parts[0]) == 1 && strchr("prtuU", parts[0][0])) {
			*error = xasprintf("'%.*s' needs three parts: %s:LIBRARY:NAME, or %s::FUNCTION "
					   "for the kernel", (int)length, text, parts[0], parts[0]);
			status = -EINVAL;
		} else {
			out->kind = BCC_UPROBE;
			out->library = xstrdup(parts[0]);
			out->function = xstrdup(parts[1]);
		}
	} else if (!typed) {
		*error = xasprintf("'%.*s' has an unknown probe type '%s' (p, r, t, u or U)",
				   (int)length, text, parts[0]);
		status = -EINVAL;
	} else if (type[0] == 'r' && !(flags & BCC_ALLOW_RETURN)) {
		*error = xasprintf("'%.*s': this tool takes no return probes (r:)", (int)length, text);
		status = -EINVAL;
	} else if (type[0] == 't') {
		out->kind = BCC_TRACEPOINT;
		out->category = xstrdup(parts[1]);
		out->function = xstrdup(parts[2]);
		if (!parts[1][0]) {
			*error = xasprintf("'%.*s': a tracepoint is t:CATEGORY:EVENT", (int)length, text);
			status = -EINVAL;
		}
	} else if (type[0] == 'u' || type[0] == 'U') {
		out->kind = BCC_USDT;
		out->user_either = type[0] == 'u' && count == 3;
		out->library = xstrdup(parts[1]);
		out->function = count == 4 ? xasprintf("%s:%s", parts[2], parts[3]) : xstrdup(parts[2]);
		if (!parts[1][0]) {
			*error = xasprintf("'%.*s' names no library or program: %s:LIBRARY:NAME",
					   (int)length, text, type);
			status = -EINVAL;
		}
	} else {
		bool user = parts[1][0] != '\0';
		out->kind = type[0] == 'p' ? (user ? BCC_UPROBE : BCC_KPROBE)
					   : (user ? BCC_URETPROBE : BCC_KRETPROBE);
		out->library = user ? xstrdup(parts[1]) : NULL;
		out->function = xstrdup(parts[2]);
	}
	if (status == 0 && !out->function[0]) {
		*error = xasprintf("'%.*s' names no function", (int)length, text);
		status = -EINVAL;
	}
	if (status == 0 && strpbrk(out->function, " \t")) {
		*error = xasprintf("'%s' is not a function name", out->function);
		status = -EINVAL;
	}
	free(spec);
	if (status < 0)
		bcc_probe_free(out);
	return status;
}

void bcc_probe_free(struct bcc_probe *probe)
{
	free(probe->library);
	free(probe->category);
	free(probe->function);
	memset(probe, 0, sizeof(*probe));
}

bool bcc_kind_has_args(enum bcc_probe_kind kind)
{
	return kind == BCC_KPROBE || kind == BCC_UPROBE || kind == BCC_USDT;
}

bool bcc_kind_is_return(enum bcc_probe_kind kind)
{
	return kind == BCC_KRETPROBE || kind == BCC_URETPROBE;
}

/* ---- expansion ---- */

/* A glob, or a compiled regular expression. */
struct name_matcher {
	const char *glob;
	regex_t regex;
	bool is_regex;
};

static int matcher_init(struct name_matcher *matcher, const char *pattern, bool regex,
			char **error)
{
	memset(matcher, 0, sizeof(*matcher));
	matcher->glob = pattern;
	matcher->is_regex = regex;
	if (regex && regcomp(&matcher->regex, pattern, REG_EXTENDED | REG_NOSUB) != 0) {
		*error = xasprintf("'%s' is not a valid regular expression", pattern);
		return -EINVAL;
	}
	return 0;
}

static bool matcher_matches(const struct name_matcher *matcher, const char *name)
{
	if (matcher->is_regex)
		return regexec(&matcher->regex, name, 0, NULL, 0) == 0;
	return wildcard_match(matcher->glob, name);
}

static void matcher_free(struct name_matcher *matcher)
{
	if (matcher->is_regex)
		regfree(&matcher->regex);
}

static const char *const kind_provider[] = {
	[BCC_KPROBE] = "kprobe",
	[BCC_KRETPROBE] = "kretprobe",
	[BCC_UPROBE] = "uprobe",
	[BCC_URETPROBE] = "uretprobe",
	[BCC_TRACEPOINT] = "tracepoint",
	[BCC_USDT] = "usdt",
};

static void add_target(bcc_target_list *out, enum bcc_probe_kind kind, const char *probe,
		       const char *name, const char *category)
{
	for (int i = 0; i < out->count; i++)
		if (strcmp(out->items[i].probe, probe) == 0)
			return;  /* one symbol under two versions, one tracepoint listed twice */
	struct bcc_target target = { xstrdup(probe), xstrdup(name),
				     category ? xstrdup(category) : NULL, kind };
	vec_push(out, target);
}

static int expand_kernel(const struct bcc_probe *probe, const struct name_matcher *matcher,
			 bcc_target_list *out, char **error)
{
	const char *provider = kind_provider[probe->kind];
	if (!matcher->is_regex && !has_wildcard(probe->function)) {
		char *name = xasprintf("%s:%s", provider, probe->function);
		add_target(out, probe->kind, name, probe->function, NULL);
		free(name);
		return 0;
	}
	const struct kernel_function *functions;
	int count;
	int status = kernel_functions(&functions, &count, error);
	for (int i = 0; status == 0 && i < count && out->count <= BCC_MAX_TARGETS; i++) {
		if (!matcher_matches(matcher, functions[i].name))
			continue;
		char *name = xasprintf("%s:%s", provider, functions[i].name);
		add_target(out, probe->kind, name, functions[i].name, NULL);
		free(name);
	}
	return status;
}

/* Asks the provider for the points of "provider:lib:pattern". */
static int expand_with_provider(const struct bcc_probe *probe, enum bcc_probe_kind kind,
				const struct name_matcher *matcher, bcc_target_list *out,
				char **error)
{
	const char *pattern = matcher->is_regex ? "*" : probe->function;
	char *text = kind == BCC_TRACEPOINT
		? xasprintf("tracepoint:%s:%s", matcher->is_regex ? "*" : probe->category, pattern)
		: xasprintf("%s:%s:%s", kind_provider[kind], probe->library, pattern);
	struct src_loc loc = { 0 };
	struct probe_spec *spec = probe_spec_parse(text, loc);
	const struct provider *provider = spec ? provider_lookup(spec->provider_name) : NULL;
	probe_point_list points = { 0 };
	int status = provider ? provider->expand(spec, &points, error) : -EINVAL;
	const struct probe_point *missing = probe_points_first_unavailable(&points);
	if (!provider) {
		*error = xasprintf("'%s' is not a probe sonde can read", text);
	} else if (status == 0 && missing) {
		/* a probe type this kernel lacks: no target can be traced */
		*error = xstrdup(missing->unavailable);
		status = -EOPNOTSUPP;
	}
	for (int i = 0; status == 0 && i < points.count && out->count <= BCC_MAX_TARGETS; i++) {
		const struct probe_point *point = points.items[i];
		const char *name = point->function ? point->function : point->name;
		char *full = kind == BCC_TRACEPOINT ? xasprintf("%s:%s", point->target, name)
						    : xstrdup(name);
		if (!matcher->is_regex || matcher_matches(matcher, full))
			add_target(out, kind, point->name, name,
				   kind == BCC_TRACEPOINT ? point->target : NULL);
		free(full);
	}
	for (int i = 0; i < points.count; i++)
		probe_point_free(points.items[i]);
	free(points.items);
	if (spec)
		probe_spec_free(spec);
	free(text);
	return status;
}

int bcc_probe_expand(const struct bcc_probe *probe, bool regex, bcc_target_list *out,
		     char **error)
{
	struct name_matcher matcher;
	int status = matcher_init(&matcher, probe->function, regex, error);
	if (status < 0)
		return status;
	int before = out->count;
	if (probe->kind == BCC_KPROBE || probe->kind == BCC_KRETPROBE) {
		status = expand_kernel(probe, &matcher, out, error);
	} else if (probe->user_either) {
		char *usdt_error = NULL;
		status = expand_with_provider(probe, BCC_USDT, &matcher, out, &usdt_error);
		free(usdt_error);
		if (status < 0 || out->count == before)
			status = expand_with_provider(probe, BCC_UPROBE, &matcher, out, error);
	} else {
		status = expand_with_provider(probe, probe->kind, &matcher, out, error);
	}
	matcher_free(&matcher);
	if (status < 0) {
		/* the provider's sentence names the library or function */
		return status == -ESRCH ? -ENOENT : status;
	}
	if (out->count == before) {
		*error = xasprintf("no %s matches '%s'%s%s",
				   probe->kind == BCC_TRACEPOINT ? "tracepoint" : "function",
				   probe->function, probe->library ? " in " : "",
				   probe->library ? probe->library : "");
		return -ENOENT;
	}
	if (out->count - before > BCC_MAX_TARGETS) {
		*error = xasprintf("'%s' matches more than %d probes; narrow it down",
				   probe->function, BCC_MAX_TARGETS);
		return -EINVAL;
	}
	return 0;
}

void bcc_target_list_free(bcc_target_list *list)
{
	for (int i = 0; i < list->count; i++) {
		free(list->items[i].probe);
		free(list->items[i].name);
		free(list->items[i].category);
	}
	free(list->items);
	memset(list, 0, sizeof(*list));
}

/* ---- splitting what follows the probe ---- */

size_t bcc_scan_until(const char *text, const char *stops)
{
	int depth = 0;
	char quote = 0;
	size_t i;
	for (i = 0; text[i]; i++) {
		char c = text[i];
		if (quote) {
			if (c == '\\' && text[i + 1])
				i++;
			else if (c == quote)
				quote = 0;
		} else if (c == '"' || c == '\'') {
			quote = c;
		} else if (c == '(' || c == '[') {
			depth++;
		} else if ((c == ')' || c == ']') && depth > 0) {
			depth--;
		} else if (depth == 0 && strchr(stops, c)) {
			break;
		}
	}
	return i;
}

/* type name, type name: the name is the last identifier, '*'s go with the type */
int bcc_params_parse(const char *text, size_t length, bcc_param_list *out, char **error)
{
	char *all = trim_copy(text, text + length), *save = NULL;
	int status = 0;
	for (char *item = strtok_r(all, ",", &save); item && status == 0;
	     item = strtok_r(NULL, ",", &save)) {
		char *param = trim_copy(item, item + strlen(item));
		size_t end = strlen(param), start = end;
		while (start > 0 && (isalnum((unsigned char)param[start - 1]) || param[start - 1] == '_'))
			start--;
		/* the type is written into the program's casts: words and '*' only */
		size_t type_end = strspn(param, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					 "0123456789_* \t");
		if (start == end || start == 0 || isdigit((unsigned char)param[start])) {
			*error = xasprintf("the parameter '%s' should be 'type name'", param);
			status = -EINVAL;
		} else if (type_end < start) {
			*error = xasprintf("the parameter '%s' should be 'type name': '%c' cannot be part "
					   "of a type", param, param[type_end]);
			status = -EINVAL;
		} else {
			struct bcc_param parsed = { trim_copy(param, param + start), xstrdup(param + start) };
			vec_push(out, parsed);
		}
		free(param);
	}
	free(all);
	return status;
}

void bcc_params_free(bcc_param_list *params)
{
	for (int i = 0; i < params->count; i++) {
		free(params->items[i].type);
		free(params->items[i].name);
	}
	free(params->items);
	memset(params, 0, sizeof(*params));
}

/* ---- errors ---- */

char *bcc_spec_error(const char *spec, size_t offset, size_t length, const char *fmt, ...)
{
	struct strbuf out;
	va_list ap;
	strbuf_init(&out);
	va_start(ap, fmt);
	strbuf_vprintf(&out, fmt, ap);
	va_end(ap);
	/* only the line that holds the place, if someone typed a newline */
	size_t total = strlen(spec);
	offset = offset > total ? total : offset;
	size_t line = offset;
	while (line > 0 && spec[line - 1] != '\n')
		line--;
	size_t line_end = offset + strcspn(spec + offset, "\n");
	strbuf_printf(&out, " (column %zu of the specifier)\n    %.*s\n    ", offset - line + 1,
		      (int)(line_end - line), spec + line);
	for (size_t i = line; i < offset; i++)
		strbuf_putc(&out, spec[i] == '\t' ? '\t' : ' ');
	strbuf_putc(&out, '^');
	for (size_t i = 1; i < length && offset + i < line_end; i++)
		strbuf_putc(&out, '~');
	return strbuf_release(&out);
}

/* ---- expressions ---- */

/* BCC's specials and what sonde calls them. */
static const struct {
	const char *bcc;
	const char *sonde;
} specials[] = {
	{ "$retval", "retval" },
	{ "$pid", "tid" },      /* BCC's pid is the kernel's: the thread */
	{ "$tgid", "pid" },
	{ "$PID", "pid" },
	{ "$uid", "uid" },
	{ "$gid", "gid" },
	{ "$cpu", "cpu" },
	{ "$task", "curtask" },
	{ "$COMM", "comm" },
};

/* The functions an expression may call: they read, and change nothing
 * (exit(), printf() or clear() would be code, not a value). */
static const char *const pure_functions[] = {
	"str", "buf", "ksym", "usym", "kaddr", "uaddr", "ntop", "kptr", "uptr", "strncmp",
	"bswap", "reg", "macaddr", "kstack", "ustack",
};

/* Where each piece of a translation came from, so that an error the parser
 * finds in the translation points at what the user wrote. */
struct translation_piece {
	size_t out;       /* offset in the translation */
	size_t out_length;
	size_t source;    /* offset in the expression */
	size_t length;    /* bytes of the expression it stands for */
};

struct translation {
	const struct bcc_expr_context *context;
	const char *text;            /* the expression (NUL-terminated copy) */
	size_t offset;               /* of text in the specifier */
	struct strbuf out;
	VEC(struct translation_piece) pieces;
	struct bcc_expr_needs *needs;
	char **error;
};

static void emit(struct translation *t, const struct token *tok, const char *text)
{
	struct translation_piece piece = { t->out.length, strlen(text),
					   (size_t)(tok->start - t->text), (size_t)tok->length };
	vec_push(&t->pieces, piece);
	strbuf_puts(&t->out, text);
}

static void emit_token(struct translation *t, const struct token *tok)
{
	char *text = xstrndup(tok->start, (size_t)tok->length);
	emit(t, tok, text);
	free(text);
}

static int fail_at(struct translation *t, const struct token *tok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(struct translation *t, const struct token *tok, const char *fmt, ...)
{
	struct strbuf message;
	va_list ap;
	strbuf_init(&message);
	va_start(ap, fmt);
	strbuf_vprintf(&message, fmt, ap);
	va_end(ap);
	*t->error = bcc_spec_error(t->context->spec, t->offset + (size_t)(tok->start - t->text),
				   (size_t)tok->length, "%s", message.data);
	strbuf_free(&message);
	return -EINVAL;
}

static bool token_is(const struct token *tok, const char *word)
{
	return (size_t)tok->length == strlen(word) && strncmp(tok->start, word, (size_t)tok->length) == 0;
}

static int param_index(const struct translation *t, const struct token *tok)
{
	const bcc_param_list *params = t->context->params;
	for (int i = 0; params && i < params->count; i++)
		if (token_is(tok, params->items[i].name))
			return i;
	return -1;
}

static void need_param(struct bcc_expr_needs *needs, int index)
{
	for (int i = 0; i < needs->params.count; i++)
		if (needs->params.items[i] == index)
			return;
	vec_push(&needs->params, index);
}

/* A parameter, at entry or (saved there) at the return. */
static int emit_param(struct translation *t, const struct token *tok, int index)
{
	if (t->context->kind == BCC_TRACEPOINT)
		return fail_at(t, tok, "a tracepoint has no arguments to name: its fields are "
			       "args->NAME");
	char *variable = xasprintf("$%s", t->context->params->items[index].name);
	need_param(t->needs, index);
	emit(t, tok, variable);
	free(variable);
	return 0;
}

/* $entry(name): the tokens after $entry must be '(' name ')'. */
static int translate_entry(struct translation *t, struct lexer *lexer, const struct token *tok)
{
	struct token open = lex_next(lexer);
	struct token name = open.kind == TOK_LPAREN ? lex_next(lexer) : open;
	struct token close = name.kind == TOK_IDENT ? lex_next(lexer) : name;
	if (open.kind != TOK_LPAREN || name.kind != TOK_IDENT || close.kind != TOK_RPAREN)
		return fail_at(t, tok, "$entry needs a parameter's name: $entry(size)");
	int index = param_index(t, &name);
	if (index < 0)
		return fail_at(t, &name, "'%.*s' is not a parameter: name it in the signature, "
			       "r:lib:function(type %.*s)", name.length, name.start, name.length,
			       name.start);
	return emit_param(t, tok, index);
}

static int translate_variable(struct translation *t, struct lexer *lexer, const struct token *tok)
{
	const struct bcc_expr_context *context = t->context;
	bool entry_special = token_is(tok, "$latency") || token_is(tok, "$entry");
	if (entry_special && !context->entry_specials)
		return fail_at(t, tok, "'%.*s' is argdist's, not trace's", tok->length, tok->start);
	if ((entry_special || token_is(tok, "$retval")) && !bcc_kind_is_return(context->kind))
		return fail_at(t, tok, "'%.*s' needs a return probe (r:)", tok->length, tok->start);
	if (token_is(tok, "$latency")) {
		t->needs->latency = true;
		emit(t, tok, "$bcc_latency");
		return 0;
	}
	if (token_is(tok, "$entry"))
		return translate_entry(t, lexer, tok);
	for (size_t s = 0; s < sizeof(specials) / sizeof(specials[0]); s++) {
		if (token_is(tok, specials[s].bcc)) {
			emit(t, tok, specials[s].sonde);
			return 0;
		}
	}
	return fail_at(t, tok, "'%.*s' is not a special sonde knows ($retval, $pid, $tgid, $uid, "
		       "$gid, $cpu, $task, $latency, $entry(p))", tok->length, tok->start);
}

static int translate_identifier(struct translation *t, const struct lexer *lexer,
				const struct token *tok, enum token_kind previous)
{
	const struct bcc_expr_context *context = t->context;
	if (previous == TOK_DOT || previous == TOK_ARROW) {
		emit_token(t, tok);  /* a field's name, not a variable */
		return 0;
	}
	struct lexer ahead = *lexer;
	if (lex_next(&ahead).kind == TOK_LPAREN) {
		for (size_t f = 0; f < sizeof(pure_functions) / sizeof(pure_functions[0]); f++) {
			if (token_is(tok, pure_functions[f])) {
				emit_token(t, tok);
				return 0;
			}
		}
		return fail_at(t, tok, "'%.*s()' cannot be called in a specifier", tok->length,
			       tok->start);
	}
	int index = param_index(t, tok);
	if (index >= 0)
		return emit_param(t, tok, index);
	if (tok->length > 3 && strncmp(tok->start, "arg", 3) == 0 &&
	    isdigit((unsigned char)tok->start[3]) && bcc_kind_has_args(context->kind)) {
		char *after = NULL;
		unsigned long number = strtoul(tok->start + 3, &after, 10);
		if (after == tok->start + tok->length && number >= 1 && number <= 16) {
			char *arg = xasprintf("arg%lu", number - 1);
			emit(t, tok, arg);
			free(arg);
			return 0;
		}
	}
	if (tok->length > 3 && strncmp(tok->start, "arg", 3) == 0 &&
	    bcc_kind_is_return(context->kind))
		return fail_at(t, tok, "a return probe has no arguments: name them in a signature, "
			       "r:lib:function(int x), to read their values at entry");
	if (token_is(tok, "retval") && !bcc_kind_is_return(context->kind))
		return fail_at(t, tok, "retval needs a return probe (r:)");
	emit_token(t, tok);
	return 0;
}

/* A token that could end the expression or do something other than read:
 * what is refused before the parser sees the text. */
static bool refused(enum token_kind kind)
{
	switch (kind) {
	case TOK_LBRACE: case TOK_RBRACE: case TOK_SEMICOLON: case TOK_PRED_END:
	case TOK_MAP: case TOK_POSITIONAL: case TOK_POSITIONAL_COUNT:
	case TOK_INC: case TOK_DEC:
	case TOK_IF: case TOK_ELSE: case TOK_WHILE: case TOK_FOR: case TOK_UNROLL: case TOK_BREAK:
	case TOK_CONTINUE: case TOK_RETURN: case TOK_LET:
		return true;
	default:
		return kind >= TOK_ASSIGN && kind <= TOK_SHR_ASSIGN;
	}
}

static int translate_tokens(struct translation *t)
{
	struct lexer lexer;
	enum token_kind previous = TOK_EOF;
	const char *previous_end = t->text;
	lex_init(&lexer, t->text);
	for (;;) {
		struct token tok = lex_next(&lexer);
		if (tok.kind == TOK_EOF)
			break;
		/* one blank for whatever separated the tokens: a comment copied
		 * into the program could swallow the rest of its line */
		if (t->out.length > 0 && tok.start > previous_end)
			strbuf_putc(&t->out, ' ');
		int status = 0;
		if (tok.kind == TOK_ERROR) {
			status = fail_at(t, &tok, "%s", tok.message);
		} else if (refused(tok.kind)) {
			char found[96];
			lex_describe(&tok, found, sizeof(found));
			status = fail_at(t, &tok, "%s cannot be part of an expression here", found);
		} else if (tok.kind == TOK_VAR) {
			status = translate_variable(t, &lexer, &tok);
		} else if (tok.kind == TOK_IDENT) {
			status = translate_identifier(t, &lexer, &tok, previous);
		} else {
			emit_token(t, &tok);
		}
		if (status < 0)
			return status;
		previous = tok.kind;
		previous_end = lexer.pos;  /* past $entry's "(name)" too */
	}
	if (t->out.length == 0) {
		struct token end = { .start = t->text + strlen(t->text) };
		return fail_at(t, &end, "an expression is empty");
	}
	return 0;
}

/* Where in the expression an offset of the translation came from: the
 * token it is in, or, between tokens, the end of the one before. */
static size_t source_offset(const struct translation *t, size_t out)
{
	for (int i = t->pieces.count - 1; i >= 0; i--) {
		const struct translation_piece *piece = &t->pieces.items[i];
		if (piece->out <= out) {
			size_t into = out - piece->out;
			if (into >= piece->out_length)
				return piece->source + piece->length;
			return piece->source + (piece->out_length == piece->length ? into : 0);
		}
	}
	return 0;
}

/* The translation must be one expression and nothing more. */
static int check_alone(struct translation *t)
{
	struct source source = { "expression", t->out.data, 0 };
	char *ignored = NULL;
	size_t ignored_size = 0;
	FILE *sink = open_memstream(&ignored, &ignored_size);
	if (!sink) {
		*t->error = xstrdup("out of memory checking an expression");
		return -ENOMEM;
	}
	struct diag diag;
	struct ast ast;
	struct node *expression;
	diag_init(&diag, &source, sink);
	int status = parse_expression_alone(&source, &ast, &expression, &diag);
	fclose(sink);
	free(ignored);
	ast_free(&ast);
	if (status == 0)
		return 0;
	/* the translation is one line: its column is its offset */
	size_t out = diag.first_loc.column > 0 ? (size_t)diag.first_loc.column - 1 : t->out.length;
	/* "found identifier 'arg0'" names the translation's token: name the
	 * user's (arg1) instead, and point at it */
	struct lexer lexer;
	lex_init(&lexer, t->text + source_offset(t, out));
	struct token written = lex_next(&lexer);
	size_t offset = t->offset + (size_t)(written.start - t->text);
	char found[96];
	lex_describe(&written, found, sizeof(found));
	char *cut = strstr(diag.first_message, ", found ");
	if (cut)
		*cut = '\0';
	*t->error = bcc_spec_error(t->context->spec, offset, (size_t)written.length, "%s%s%s",
				   diag.first_message, cut ? ", found " : "", cut ? found : "");
	return -EINVAL;
}

/* The error a compile reported on one line of its program, mapped into
 * the specifier; 0 when there was none there (an error elsewhere is the
 * generated program's, reported when it is compiled for real). */
static int report_on_line(struct translation *t, const struct diag *diag, int line)
{
	if (diag->error_count == 0 || diag->first_loc.line != line || diag->first_loc.column < 1)
		return 0;
	size_t offset = t->offset + source_offset(t, (size_t)diag->first_loc.column - 1);
	*t->error = bcc_spec_error(t->context->spec, offset, 1, "%s", diag->first_message);
	return -EINVAL;
}

/* The translation compiled alone on the target, after the same entry probe
 * and prologue the generator writes, on a line of its own. */
static int check_types(struct translation *t)
{
	const struct bcc_expr_context *context = t->context;
	if (!context->target)
		return 0;
	struct strbuf program;
	strbuf_init(&program);
	bcc_entry_probe_write(context->target, context, t->needs, "@bcc_check_", "tid", "",
			      &program);
	strbuf_printf(&program, "%s\n{\n", context->target->probe);
	bcc_body_prologue(context, t->needs, "@bcc_check_", "tid", &program);
	strbuf_puts(&program, "\t$bcc_value = (\n");
	int line = 1;
	for (size_t i = 0; i < program.length; i++)
		line += program.data[i] == '\n';
	strbuf_printf(&program, "%s\n\t);\n}\n", t->out.data);

	struct source source = { "expression", program.data, 0 };
	struct compile_options options = { 0 };
	struct program compiled;
	struct diag diag;
	char *ignored = NULL;
	size_t ignored_size = 0;
	FILE *sink = open_memstream(&ignored, &ignored_size);
	int status = 0;
	if (sink) {
		memset(&compiled, 0, sizeof(compiled));
		diag_init(&diag, &source, sink);
		if (compile_program(&source, &options, &compiled, &diag) < 0)
			status = report_on_line(t, &diag, line);
		compile_free(&compiled);
		fclose(sink);
	}
	free(ignored);
	strbuf_free(&program);
	return status;
}

char *bcc_expr_translate(const struct bcc_expr_context *context, size_t offset, size_t length,
			 struct bcc_expr_needs *needs, char **error)
{
	struct translation t = { context, xstrndup(context->spec + offset, length), offset,
				 { 0 }, { 0 }, needs, error };
	strbuf_init(&t.out);
	int status = translate_tokens(&t);
	if (status == 0)
		status = check_alone(&t);
	if (status == 0)
		status = check_types(&t);
	free((char *)t.text);
	free(t.pieces.items);
	if (status < 0) {
		strbuf_free(&t.out);
		return NULL;
	}
	return strbuf_release(&t.out);
}

void bcc_expr_needs_free(struct bcc_expr_needs *needs)
{
	free(needs->params.items);
	memset(needs, 0, sizeof(*needs));
}

/* ---- parameters at entry and at the return ---- */

/* Integer types sonde can cast to; anything else is read as a u64. */
static const char *const cast_types[] = {
	"int", "long", "short", "char", "size_t", "ssize_t", "off_t", "pid_t", "uid_t", "gid_t",
	"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "int8", "int16", "int32", "int64",
	"uint8", "uint16", "uint32", "uint64",
};

/* A parameter read from the arguments: "(size_t)arg0". */
static void param_read(const bcc_param_list *params, int index, struct strbuf *out)
{
	const char *type = params->items[index].type;
	bool cast = strncmp(type, "struct ", 7) == 0 && strchr(type, '*');
	for (size_t t = 0; !cast && t < sizeof(cast_types) / sizeof(cast_types[0]); t++)
		cast = strcmp(type, cast_types[t]) == 0;
	if (cast)
		strbuf_printf(out, "(%s)", type);
	strbuf_printf(out, "arg%d", index);
}

char *bcc_type_cast(const char *type, const char *expr)
{
	for (size_t t = 0; t < sizeof(cast_types) / sizeof(cast_types[0]); t++)
		if (strcmp(type, cast_types[t]) == 0)
			return xasprintf("(%s)(%s)", type, expr);
	return xstrdup(expr);
}

void bcc_body_prologue(const struct bcc_expr_context *context, const struct bcc_expr_needs *needs,
		       const char *maps, const char *key, struct strbuf *body)
{
	const bcc_param_list *params = context->params;
	if (!bcc_kind_is_return(context->kind)) {
		for (int i = 0; i < needs->params.count; i++) {
			strbuf_printf(body, "\t$%s = ", params->items[needs->params.items[i]].name);
			param_read(params, needs->params.items[i], body);
			strbuf_puts(body, ";\n");
		}
		return;
	}
	if (!needs->latency && needs->params.count == 0)
		return;
	const char *first = needs->latency ? "start" : params->items[needs->params.items[0]].name;
	strbuf_printf(body, "\tif (!has_key(%s%s, %s)) {\n\t\treturn;\n\t}\n", maps, first, key);
	if (needs->latency)
		strbuf_printf(body, "\t$bcc_latency = nsecs - %sstart[%s];\n\tdelete(%sstart[%s]);\n",
			      maps, key, maps, key);
	for (int i = 0; i < needs->params.count; i++) {
		const char *name = params->items[needs->params.items[i]].name;
		strbuf_printf(body, "\t$%s = %s%s[%s];\n\tdelete(%s%s[%s]);\n", name, maps, name, key,
			      maps, name, key);
	}
}

void bcc_entry_probe_write(const struct bcc_target *target, const struct bcc_expr_context *context,
			   const struct bcc_expr_needs *needs, const char *maps, const char *key,
			   const char *predicate, struct strbuf *program)
{
	if (!bcc_kind_is_return(target->kind) || (!needs->latency && needs->params.count == 0))
		return;
	const char *colon = strchr(target->probe, ':');
	strbuf_printf(program, "%s%s\n%s\n{\n", target->kind == BCC_KRETPROBE ? "kprobe" : "uprobe",
		      colon ? colon : "", predicate);
	if (needs->latency)
		strbuf_printf(program, "\t%sstart[%s] = nsecs;\n", maps, key);
	for (int i = 0; i < needs->params.count; i++) {
		strbuf_printf(program, "\t%s%s[%s] = ", maps,
			      context->params->items[needs->params.items[i]].name, key);
		param_read(context->params, needs->params.items[i], program);
		strbuf_puts(program, ";\n");
	}
	strbuf_puts(program, "}\n\n");
}

int bcc_probe_parse_head(const char *text, unsigned flags, struct bcc_probe *probe,
			 bcc_param_list *params, size_t *used, char **error)
{
	size_t end = strcspn(text, " \t(#\"");
	int status = bcc_probe_parse(text, end, flags, probe, error);
	if (status < 0)
		return status;
	if (text[end] == '(') {
		size_t close = end + 1 + bcc_scan_until(text + end + 1, ")");
		if (text[close] != ')') {
			*error = xasprintf("the signature in '%s' has no closing ')'", text);
			bcc_probe_free(probe);
			return -EINVAL;
		}
		status = bcc_params_parse(text + end + 1, close - end - 1, params, error);
		if (status < 0) {
			bcc_probe_free(probe);
			return status;
		}
		end = close + 1;
	}
	*used = end;
	return 0;
}
