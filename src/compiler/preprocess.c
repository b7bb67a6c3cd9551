/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Preprocessing: the part of the C preprocessor that bpftrace scripts use.
 *
 * bpftrace runs scripts through clang, so tools carry lines such as
 * `#include <linux/socket.h>`, `#define MAX 10` and
 * `#ifndef BPFTRACE_HAVE_BTF ... #endif` around hand-written structs. sonde
 * has no C compiler at run time; instead this pass, run on the program text
 * before the lexer:
 *  - keeps or drops #if[n]def/#else/#endif regions (BPFTRACE_HAVE_BTF is
 *    defined when the kernel has BTF, plus anything the script #defines);
 *  - collects `#define NAME VALUE` when VALUE is an integer (or another such
 *    name), from the script and from the headers it #includes (searched in
 *    the system include directories; `#include "x.h"` looks beside the
 *    including file first, and the script's also in the working directory;
 *    following their own #includes a few levels deep);
 *  - blanks every directive line and every dropped region, so that line and
 *    column numbers in the remaining text stay those of the original;
 *  - substitutes the caller's predefined macros (a tool's option values) as
 *    text, padding a shorter replacement with blanks so that columns after
 *    it stay right.
 * Semantic analysis looks unknown identifiers up in the collected table.
 *
 * A header that exists nowhere is an error ("file not found", as bpftrace
 * says), except under the kernel's own include directories (linux/, net/,
 * ...): bpftrace's tools include kernel-internal headers such as
 * <net/sock.h>, which a machine without kernel sources lacks, and BTF gives
 * sonde those types anyway. A directory or a device is an error too, and so
 * are an #if, #ifdef or #ifndef without #endif and an #else or #endif
 * without #if.
 */
#include "preprocess.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../kernel/btf.h"

#define MAX_INCLUDE_DEPTH 6
#define MAX_INCLUDED_FILES 200

static const char *const include_directories[] = {
	"/usr/local/include",
	"/usr/include/x86_64-linux-gnu",
	"/usr/include",
};

struct preprocessor {
	struct macro_table *macros;
	VEC(char *) included;   /* paths already read, to read each once */
};

/* Top directories of the kernel's include/ tree: a missing header under one
 * of them is one of the kernel's own, whose types BTF provides. */
static const char *const kernel_header_directories[] = {
	"linux/", "net/", "asm/", "asm-generic/", "uapi/", "trace/", "scsi/", "crypto/",
	"keys/", "sound/", "video/", "drm/", "rdma/", "xen/", "kvm/", "media/", "soc/", "acpi/",
};

static bool is_kernel_header(const char *name)
{
	for (size_t i = 0; i < sizeof(kernel_header_directories) / sizeof(kernel_header_directories[0]); i++)
		if (strncmp(name, kernel_header_directories[i], strlen(kernel_header_directories[i])) == 0)
			return true;
	return false;
}

static bool is_ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static char *read_identifier(const char **p, const char *end)
{
	const char *start = *p;
	if (start >= end || !is_ident_start(*start))
		return NULL;
	while (*p < end && is_ident_char(**p))
		(*p)++;
	return xstrndup(start, (size_t)(*p - start));
}

struct macro *macro_find(const struct macro_table *table, const char *name)
{
	for (int i = table->count - 1; i >= 0; i--)
		if (strcmp(table->items[i].name, name) == 0)
			return &table->items[i];
	return NULL;
}

/*
 * Constant expressions of #if and of #define values: integers (with C
 * suffixes), macro names, defined(NAME), parentheses, unary ! - ~ and the
 * binary operators * / % + - < <= > >= == != & | && ||, with C's
 * precedence. A name that is no macro with a value counts as 0, as in C,
 * and is noted in `unknown`: a #define whose value names one has no value.
 */
struct const_reader {
	const struct macro_table *table;
	const char *p;
	bool ok;
	bool unknown;
};

static void const_blanks(struct const_reader *r)
{
	while (*r->p == ' ' || *r->p == '\t')
		r->p++;
}

static bool const_take(struct const_reader *r, const char *op)
{
	const_blanks(r);
	size_t length = strlen(op);
	if (strncmp(r->p, op, length) != 0)
		return false;
	/* `&` is not the start of `&&`, `<` not of `<=`, `/` not of a comment */
	if (length == 1 && (r->p[1] == op[0] || (r->p[1] == '=' && strchr("<>!=", op[0])) ||
			    (op[0] == '/' && r->p[1] == '*')))
		return false;
	r->p += length;
	return true;
}

static int64_t const_or(struct const_reader *r);

static int64_t const_primary(struct const_reader *r)
{
	const_blanks(r);
	if (const_take(r, "(")) {
		int64_t value = const_or(r);
		if (!const_take(r, ")"))
			r->ok = false;
		return value;
	}
	if (const_take(r, "!"))
		return !const_primary(r);
	if (const_take(r, "-"))
		return -const_primary(r);
	if (const_take(r, "~"))
		return ~const_primary(r);
	if (is_ident_start(*r->p)) {
		const char *start = r->p;
		while (is_ident_char(*r->p))
			r->p++;
		char *name = xstrndup(start, (size_t)(r->p - start));
		int64_t value = 0;
		if (strcmp(name, "defined") == 0) {
			bool parenthesized = const_take(r, "(");
			const_blanks(r);
			start = r->p;
			while (is_ident_char(*r->p))
				r->p++;
			char *operand = xstrndup(start, (size_t)(r->p - start));
			r->ok &= *operand != '\0' && (!parenthesized || const_take(r, ")"));
			value = macro_find(r->table, operand) != NULL;
			free(operand);
		} else {
			const struct macro *macro = macro_find(r->table, name);
			if (macro && macro->has_value)
				value = macro->value;
			else
				r->unknown = true;
		}
		free(name);
		return value;
	}
	if (!isdigit((unsigned char)*r->p)) {
		r->ok = false;
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long long parsed = strtoull(r->p, &end, 0);
	if (errno)
		r->ok = false;
	while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
		end++;
	r->p = end;
	return (int64_t)parsed;
}

static int64_t const_binary(struct const_reader *r, int level)
{
	static const char *const levels[][4] = {
		{ "||" }, { "&&" }, { "|" }, { "&" }, { "==", "!=" }, { "<=", ">=", "<", ">" },
		{ "+", "-" }, { "*", "/", "%" },
	};
	if (level == (int)(sizeof(levels) / sizeof(levels[0])))
		return const_primary(r);
	int64_t value = const_binary(r, level + 1);
	for (;;) {
		const char *op = NULL;
		for (int i = 0; i < 4 && levels[level][i] && !op; i++)
			if (const_take(r, levels[level][i]))
				op = levels[level][i];
		if (!op)
			return value;
		int64_t rhs = const_binary(r, level + 1);
		if ((op[0] == '/' || op[0] == '%') && rhs == 0) {
			r->ok = false;
			return 0;
		}
		switch (op[0] * 256 + op[1]) {
		case '|' * 256 + '|': value = value || rhs; break;
		case '&' * 256 + '&': value = value && rhs; break;
		case '|' * 256: value |= rhs; break;
		case '&' * 256: value &= rhs; break;
		case '=' * 256 + '=': value = value == rhs; break;
		case '!' * 256 + '=': value = value != rhs; break;
		case '<' * 256 + '=': value = value <= rhs; break;
		case '>' * 256 + '=': value = value >= rhs; break;
		case '<' * 256: value = value < rhs; break;
		case '>' * 256: value = value > rhs; break;
		case '+' * 256: value = (int64_t)((uint64_t)value + (uint64_t)rhs); break;
		case '-' * 256: value = (int64_t)((uint64_t)value - (uint64_t)rhs); break;
		case '*' * 256: value = (int64_t)((uint64_t)value * (uint64_t)rhs); break;
		case '/' * 256: value = rhs == -1 ? (int64_t)(0 - (uint64_t)value) : value / rhs; break;
		case '%' * 256: value = rhs == -1 ? 0 : value % rhs; break;
		}
	}
}

static int64_t const_or(struct const_reader *r)
{
	return const_binary(r, 0);
}

/* Evaluates text (to its end, a comment, or a line end); false when it is
 * no constant expression. *unknown says whether it named a non-macro. */
static bool evaluate_value(const struct macro_table *table, const char *text, int64_t *value,
			   bool *unknown)
{
	struct const_reader r = { .table = table, .p = text, .ok = true };
	*value = const_or(&r);
	const_blanks(&r);
	*unknown = r.unknown;
	return r.ok && (*r.p == '\0' || *r.p == '/' || *r.p == '\n' || *r.p == '\r');
}

static void define_macro(struct macro_table *table, const char *name, const char *value_text)
{
	int64_t value;
	bool unknown;
	bool has_value = evaluate_value(table, value_text, &value, &unknown) && !unknown;
	struct macro macro = { .name = xstrdup(name), .value = has_value ? value : 0,
			       .has_value = has_value };
	vec_push(table, macro);
}

static int include_file(struct preprocessor *pp, const char *name, const char *quote_dir,
			int depth);

/* Reads the #defines (and nested #includes) of one header, which is in
 * directory dir (where its own `#include "x.h"` looks first). */
static void scan_header(struct preprocessor *pp, const char *text, const char *dir, int depth)
{
	const char *p = text;
	while (*p) {
		const char *line_end = strchr(p, '\n');
		if (!line_end)
			line_end = p + strlen(p);
		const char *q = skip_blanks(p, line_end);
		if (q < line_end && *q == '#') {
			q = skip_blanks(q + 1, line_end);
			if (strncmp(q, "define", 6) == 0) {
				q = skip_blanks(q + 6, line_end);
				char *name = read_identifier(&q, line_end);
				/* function-like macros are not constants */
				if (name && (q >= line_end || *q != '(')) {
					char *value = xstrndup(q, (size_t)(line_end - q));
					define_macro(pp->macros, name, value);
					free(value);
				}
				free(name);
			} else if (strncmp(q, "include", 7) == 0) {
				q = skip_blanks(q + 7, line_end);
				if (q < line_end && (*q == '<' || *q == '"')) {
					char close = *q == '<' ? '>' : '"';
					const char *end = memchr(q + 1, close, (size_t)(line_end - q - 1));
					if (end) {
						char *nested = xstrndup(q + 1, (size_t)(end - q - 1));
						include_file(pp, nested, close == '"' ? dir : NULL,
							     depth + 1);
						free(nested);
					}
				}
			}
		}
		p = *line_end ? line_end + 1 : line_end;
	}
}

/* The directory part of path ("." when it has none). */
static char *directory_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return xstrdup(".");
	return slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
}

/* Reads the header `name`: absolute, or searched in quote_dir first (the
 * including file's directory, for `#include "x.h"`; NULL for <x.h>) and
 * then in the include directories. Returns 0, or -ENOENT when it exists
 * nowhere, -EISDIR or -EINVAL when it is a directory or not a regular file
 * (a device would never end). */
static int include_file(struct preprocessor *pp, const char *name, const char *quote_dir,
			int depth)
{
	if (depth > MAX_INCLUDE_DEPTH || pp->included.count >= MAX_INCLUDED_FILES)
		return 0;
	int first = name[0] != '/' && quote_dir ? -1 : 0;
	int directory_count = name[0] == '/' ? 1 :
			      (int)(sizeof(include_directories) / sizeof(include_directories[0]));
	for (int i = first; i < directory_count; i++) {
		char *path = name[0] == '/' ? xstrdup(name) :
			     xasprintf("%s/%s", i < 0 ? quote_dir : include_directories[i], name);
		bool seen = false;
		for (int j = 0; j < pp->included.count && !seen; j++)
			seen = strcmp(pp->included.items[j], path) == 0;
		if (seen) {
			free(path);
			return 0;
		}
		struct stat st;
		if (stat(path, &st) != 0) {
			free(path);
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			free(path);
			return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		}
		char *text = read_file(path, NULL);
		if (!text) {
			free(path);
			continue;
		}
		vec_push(&pp->included, path);
		char *dir = directory_of(path);
		scan_header(pp, text, dir, depth);
		free(dir);
		free(text);
		return 0;
	}
	return -ENOENT;
}

static void blank(char *from, char *to)
{
	for (char *p = from; p < to; p++)
		if (*p != '\n')
			*p = ' ';
}

static const struct predefined_macro *find_predefined(const struct predefined_macro *predefined,
						     int count, const char *name, size_t length)
{
	for (int i = 0; i < count; i++)
		if (strlen(predefined[i].name) == length && memcmp(predefined[i].name, name, length) == 0)
			return &predefined[i];
	return NULL;
}

/* Appends body with every identifier `parameter` replaced by argument. */
static void expand_body(struct strbuf *out, const char *body, const char *parameter,
			const char *argument, size_t argument_length)
{
	const char *p = body;
	while (*p) {
		if (parameter && is_ident_start(*p) && (p == body || !is_ident_char(p[-1]))) {
			const char *end = p;
			while (is_ident_char(*end))
				end++;
			if ((size_t)(end - p) == strlen(parameter) &&
			    memcmp(p, parameter, (size_t)(end - p)) == 0)
				strbuf_append(out, argument, argument_length);
			else
				strbuf_append(out, p, (size_t)(end - p));
			p = end;
			continue;
		}
		strbuf_append(out, p, 1);
		p++;
	}
}

/* Where a "..." literal or a comment starting at p ends (p itself if none starts). */
static const char *skip_literal_or_comment(const char *p)
{
	if (*p == '"') {
		p++;
		while (*p && *p != '"' && *p != '\n') {
			if (*p == '\\' && p[1])
				p++;
			p++;
		}
		return *p == '"' ? p + 1 : p;
	}
	if (p[0] == '/' && p[1] == '/') {
		while (*p && *p != '\n')
			p++;
		return p;
	}
	if (p[0] == '/' && p[1] == '*') {
		const char *end = strstr(p + 2, "*/");
		return end ? end + 2 : p + strlen(p);
	}
	return p;
}

/* The text with every predefined macro replaced (a new string). A use of a
 * function-like macro without its parenthesised argument is left alone. */
char *preprocess_substitute(const char *text, const struct predefined_macro *predefined,
			    int count)
{
	struct strbuf out;
	strbuf_init(&out);
	const char *p = text;
	while (*p) {
		const char *after = skip_literal_or_comment(p);
		if (after != p) {
			strbuf_append(&out, p, (size_t)(after - p));
			p = after;
			continue;
		}
		if (!is_ident_start(*p) || (p > text && is_ident_char(p[-1]))) {
			strbuf_append(&out, p, 1);
			p++;
			continue;
		}
		const char *end = p;
		while (is_ident_char(*end))
			end++;
		const struct predefined_macro *macro = find_predefined(predefined, count, p,
								       (size_t)(end - p));
		const char *argument = NULL, *use_end = end;
		if (macro && macro->parameter) {
			const char *open = end;
			while (*open == ' ' || *open == '\t')
				open++;
			int depth = 0;
			const char *q = open;
			if (*q == '(') {
				for (; *q; q++) {
					if (*q == '(')
						depth++;
					else if (*q == ')' && --depth == 0)
						break;
				}
			}
			if (*open != '(' || *q != ')') {
				macro = NULL;
			} else {
				argument = open + 1;
				use_end = q + 1;
			}
		}
		if (!macro) {
			strbuf_append(&out, p, (size_t)(end - p));
			p = end;
			continue;
		}
		size_t before = out.length;
		expand_body(&out, macro->body, macro->parameter, argument,
			    argument ? (size_t)(use_end - 1 - argument) : 0);
		/* keep the columns of what follows when the replacement is shorter */
		for (size_t written = out.length - before; written < (size_t)(use_end - p); written++)
			strbuf_append(&out, " ", 1);
		p = use_end;
	}
	if (!out.data)
		strbuf_puts(&out, "");
	return strbuf_release(&out);
}

/* `#if EXPR` / `#elif EXPR`: a constant expression, names that are no
 * macros counting as 0 (as in C); false in *ok for anything else. */
static bool evaluate_condition(const struct macro_table *table, const char *from, const char *to,
			       bool *ok)
{
	char *text = xstrndup(from, (size_t)(to - from));
	int64_t value = 0;
	bool unknown;
	*ok = evaluate_value(table, text, &value, &unknown);
	free(text);
	return *ok && value != 0;
}

static void preprocess_error(struct diag *diag, int line, int column, int *errors, const char *fmt,
			     const char *arg)
{
	(*errors)++;
	if (diag)
		diag_error(diag, (struct src_loc){ .line = line, .column = column, .length = 1 }, fmt, arg);
}

int preprocess_program(const char *text, const char *script_path,
		       const struct predefined_macro *predefined, int predefined_count,
		       struct preprocessed *out, struct diag *diag)
{
	char *script_dir = script_path ? directory_of(script_path) : NULL;
	struct preprocessor pp = { .macros = &out->macros };
	int errors = 0, line = 1;
	int open_line[64], open_column[64];
	for (int i = 0; i < predefined_count; i++)
		define_macro(&out->macros, predefined[i].name,
			     predefined[i].parameter ? "" : predefined[i].body);
	out->text = xstrdup(text);
	/* condition stack: whether each open #if region is being kept */
	bool keeping[64];
	bool taken[64];
	int else_line[64];   /* where the region's #else is, or 0 */
	int depth = 0;
	char *p = out->text;
	bool at_line_start = true;
	while (*p) {
		char *line_end = strchr(p, '\n');
		if (!line_end)
			line_end = p + strlen(p);
		bool active = depth == 0 || keeping[depth - 1];
		const char *q = skip_blanks(p, line_end);
		if (at_line_start && q < line_end && *q == '#' && !(p == out->text && q[1] == '!')) {
			int column = (int)(q - p) + 1;
			q = skip_blanks(q + 1, line_end);
			if (strncmp(q, "if", 2) == 0 && (q + 2 == line_end || !is_ident_char(q[2]))) {
				bool ok;
				bool value = evaluate_condition(&out->macros, q + 2, line_end, &ok);
				if (!ok)
					preprocess_error(diag, line, column, &errors, "%s",
							 "#if needs a constant expression of integers and "
							 "macro names");
				if (depth < 64) {
					keeping[depth] = active && value;
					taken[depth] = keeping[depth];
					else_line[depth] = 0;
					open_line[depth] = line;
					open_column[depth] = column;
					depth++;
				}
			} else if ((strncmp(q, "elif", 4) == 0 || strncmp(q, "else", 4) == 0) &&
				   depth > 0 && depth <= 64 && else_line[depth - 1]) {
				/* C allows one #else, last: a second would silently flip
				 * the region back */
				char where[32];
				snprintf(where, sizeof(where), "%d", else_line[depth - 1]);
				preprocess_error(diag, line, column, &errors,
						 strncmp(q, "else", 4) == 0
							 ? "#else after this #if's #else (line %s)"
							 : "#elif after this #if's #else (line %s)",
						 where);
			} else if (strncmp(q, "elif", 4) == 0 && depth > 0) {
				bool ok;
				bool value = evaluate_condition(&out->macros, q + 4, line_end, &ok);
				if (!ok)
					preprocess_error(diag, line, column, &errors, "%s",
							 "#elif needs a constant expression of integers and "
							 "macro names");
				bool outer = depth < 2 || keeping[depth - 2];
				keeping[depth - 1] = outer && !taken[depth - 1] && value;
				taken[depth - 1] = taken[depth - 1] || keeping[depth - 1];
			} else if ((strncmp(q, "else", 4) == 0 || strncmp(q, "elif", 4) == 0 ||
				    strncmp(q, "endif", 5) == 0) && depth == 0) {
				preprocess_error(diag, line, column, &errors, "#%s without #if",
						 strncmp(q, "endif", 5) == 0 ? "endif" :
						 strncmp(q, "else", 4) == 0 ? "else" : "elif");
			} else if (strncmp(q, "ifdef", 5) == 0 || strncmp(q, "ifndef", 6) == 0) {
				bool negate = q[2] == 'n';
				q = skip_blanks(q + (negate ? 6 : 5), line_end);
				char *name = read_identifier(&q, line_end);
				bool defined = name && macro_find(&out->macros, name);
				/* asked only here, so programs without the guard never load BTF */
				if (name && !defined && strcmp(name, "BPFTRACE_HAVE_BTF") == 0)
					defined = btf_available();
				free(name);
				if (depth < 64) {
					keeping[depth] = active && (negate ? !defined : defined);
					taken[depth] = keeping[depth];
					else_line[depth] = 0;
					open_line[depth] = line;
					open_column[depth] = column;
					depth++;
				}
			} else if (strncmp(q, "else", 4) == 0 && depth > 0) {
				bool outer = depth < 2 || keeping[depth - 2];
				keeping[depth - 1] = outer && !taken[depth - 1];
				taken[depth - 1] = true;
				else_line[depth - 1] = line;
			} else if (strncmp(q, "endif", 5) == 0 && depth > 0) {
				depth--;
			} else if (active && strncmp(q, "define", 6) == 0) {
				q = skip_blanks(q + 6, line_end);
				char *name = read_identifier(&q, line_end);
				if (name && (q >= line_end || *q != '(')) {
					char *value = xstrndup(q, (size_t)(line_end - q));
					define_macro(&out->macros, name, value);
					free(value);
				}
				free(name);
			} else if (active && strncmp(q, "include", 7) == 0) {
				q = skip_blanks(q + 7, line_end);
				if (q < line_end && (*q == '<' || *q == '"')) {
					char close = *q == '<' ? '>' : '"';
					const char *end = memchr(q + 1, close, (size_t)(line_end - q - 1));
					if (end) {
						char *name = xstrndup(q + 1, (size_t)(end - q - 1));
						char *spelled = xstrndup(q, (size_t)(end - q + 1));
						/* "x.h": beside the script, then in the working
						 * directory (where bpftrace 0.17 finds it) */
						int status = include_file(&pp, name, close != '"' ? NULL :
									  script_dir ? script_dir : ".", 0);
						if (status == -ENOENT && close == '"' && script_dir)
							status = include_file(&pp, name, ".", 0);
						if (status == -EISDIR)
							preprocess_error(diag, line, column, &errors,
									 "#include %s: a directory, not a file", spelled);
						else if (status == -EINVAL)
							preprocess_error(diag, line, column, &errors,
									 "#include %s: not a regular file", spelled);
						else if (status == -ENOENT && !is_kernel_header(name))
							preprocess_error(diag, line, column, &errors,
									 "#include %s: file not found", spelled);
						free(spelled);
						free(name);
					}
				}
			}
			blank(p, line_end);
		} else if (!active) {
			blank(p, line_end);
		}
		at_line_start = true;
		if (*line_end)
			line++;
		p = *line_end ? line_end + 1 : line_end;
	}
	if (depth > 0 && depth <= 64)
		preprocess_error(diag, open_line[depth - 1], open_column[depth - 1], &errors, "%s",
				 "this #if has no #endif");
	for (int i = 0; i < pp.included.count; i++)
		free(pp.included.items[i]);
	free(pp.included.items);
	free(script_dir);
	if (predefined_count > 0) {
		char *substituted = preprocess_substitute(out->text, predefined, predefined_count);
		free(out->text);
		out->text = substituted;
	}
	return errors ? -1 : 0;
}

void preprocessed_free(struct preprocessed *pre)
{
	for (int i = 0; i < pre->macros.count; i++)
		free(pre->macros.items[i].name);
	free(pre->macros.items);
	free(pre->text);
	memset(pre, 0, sizeof(*pre));
}
