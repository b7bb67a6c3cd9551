/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace's program. Each argument is one BCC trace specifier,
 *
 *     [p|r|t|u|U:][lib:]function[(signature)] [(filter)] ["format"[, arg...]]
 *
 * and becomes one probe per function it matches, printing BCC's columns
 * (PID TID COMM FUNC) and then the message. The message is printf's work:
 * BCC's %K and %U (a kernel or user address as a symbol) become %s of
 * ksym()/usym(), and a %s argument is read with str(), as BCC reads it. The
 * filter is tested at the top of the body rather than in a predicate so it
 * can use the signature's parameters, which are variables set there (in a
 * return probe, from the values its entry probe saved). The format is one
 * string literal read by sonde's lexer and written back escaped; the filter
 * and each argument go through bcc_expr_translate: nothing is pasted.
 *
 * -f (BCC's message filter) keeps the lines whose message holds a text. The
 * message only exists once user space has formatted it, so the whole line
 * (time, columns, message, stacks) becomes one printf_matching() call whose
 * format marks the message with \x1f bytes; the runtime drops the lines
 * that do not match.
 */
#include "generator.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../compiler/lex.h"
#include "bccspec.h"

/* A part of a specifier: where it is, for translating it and for errors. */
struct trace_part {
	size_t offset;
	size_t length;
};

/* What one specifier says, split into its parts. */
struct trace_spec {
	const char *text;    /* as written */
	struct bcc_probe probe;
	bcc_param_list params;
	bool has_filter;
	struct trace_part filter;
	char *format;        /* the format's bytes, escapes decoded; NULL if none */
	struct trace_part format_part;
	VEC(struct trace_part) args;
};

static void trace_spec_free(struct trace_spec *spec)
{
	bcc_probe_free(&spec->probe);
	bcc_params_free(&spec->params);
	free(spec->format);
	free(spec->args.items);
}

static const char *skip_blanks(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* The format: one string literal as sonde's lexer reads it, so what it
 * holds is text and nothing else. Returns where it ends, or NULL. */
static const char *read_format(const char *text, const char *p, struct trace_spec *spec,
			       char **error)
{
	struct lexer lexer;
	lex_init(&lexer, p);
	struct token tok = lex_next(&lexer);
	size_t offset = (size_t)(tok.start - text);
	if (tok.kind != TOK_STRING) {
		*error = bcc_spec_error(text, offset, (size_t)tok.length, "%s",
					tok.kind == TOK_ERROR ? tok.message : "expected the format string");
		return NULL;
	}
	char *format = xcalloc((size_t)tok.length + 1, 1);
	int length = lex_string_value(&tok, format);
	if (memchr(format, '\0', (size_t)length)) {
		*error = bcc_spec_error(text, offset, (size_t)tok.length, "the format holds a NUL byte");
		free(format);
		return NULL;
	}
	spec->format = format;
	spec->format_part = (struct trace_part){ offset, (size_t)tok.length };
	return tok.start + tok.length;
}

/* spec = head [ '(' filter ')' ] [ '"' format '"' { ',' arg } ] */
static int trace_spec_parse(const char *text, struct trace_spec *spec, char **error)
{
	size_t used;
	memset(spec, 0, sizeof(*spec));
	spec->text = text;
	int status = bcc_probe_parse_head(text, BCC_ALLOW_RETURN, &spec->probe, &spec->params,
					  &used, error);
	if (status < 0)
		return status;
	const char *p = skip_blanks(text + used);
	if (*p == '(') {
		size_t length = bcc_scan_until(p + 1, ")");
		if (p[1 + length] != ')') {
			*error = bcc_spec_error(text, (size_t)(p - text), 1, "the filter has no closing ')'");
			return -EINVAL;
		}
		spec->has_filter = true;
		spec->filter = (struct trace_part){ (size_t)(p + 1 - text), length };
		p = skip_blanks(p + length + 2);
	}
	if (*p == '"') {
		p = read_format(text, p, spec, error);
		if (!p)
			return -EINVAL;
		p = skip_blanks(p);
		while (*p == ',') {
			size_t length = bcc_scan_until(p + 1, ",");
			struct trace_part arg = { (size_t)(p + 1 - text), length };
			vec_push(&spec->args, arg);
			p = skip_blanks(p + 1 + length);
		}
	}
	if (*p) {
		*error = bcc_spec_error(text, (size_t)(p - text), 1,
					"unexpected text (expected [(filter)] [\"format\", args])");
		return -EINVAL;
	}
	return 0;
}

/* The format with %K/%U turned into %s, and the arguments that feed it. */
static int message(const struct trace_spec *spec, const struct bcc_expr_context *context,
		   struct bcc_expr_needs *needs, struct strbuf *format, struct strbuf *args,
		   char **error)
{
	int used = 0;
	struct strbuf decoded;
	strbuf_init(&decoded);
	for (const char *p = spec->format ? spec->format : ""; *p; p++) {
		strbuf_putc(&decoded, *p);
		if (*p != '%')
			continue;
		if (p[1] == '%') {
			strbuf_putc(&decoded, *++p);
			continue;
		}
		const char *conversion = p + 1 + strspn(p + 1, "-+ #0123456789.hlzjt");
		if (!*conversion)
			break;
		strbuf_printf(&decoded, "%.*s", (int)(conversion - p - 1), p + 1);
		if (used == spec->args.count) {
			*error = bcc_spec_error(spec->text, spec->format_part.offset,
						spec->format_part.length,
						"the format has more conversions than arguments");
			strbuf_free(&decoded);
			return -EINVAL;
		}
		const struct trace_part *part = &spec->args.items[used++];
		char *arg = bcc_expr_translate(context, part->offset, part->length, needs, error);
		if (!arg) {
			strbuf_free(&decoded);
			return -EINVAL;
		}
		const char *wrap = *conversion == 's' ? "str" : *conversion == 'K' ? "ksym"
				 : *conversion == 'U' ? "usym" : NULL;
		strbuf_putc(&decoded, *conversion == 'K' || *conversion == 'U' ? 's' : *conversion);
		if (wrap)
			strbuf_printf(args, ", %s(%s)", wrap, arg);
		else
			strbuf_printf(args, ", %s", arg);
		free(arg);
		p = conversion;
	}
	if (used < spec->args.count) {
		*error = bcc_spec_error(spec->text, spec->args.items[used].offset,
					spec->args.items[used].length,
					"the format has fewer conversions than arguments");
		strbuf_free(&decoded);
		return -EINVAL;
	}
	generator_escape(format, decoded.data ? decoded.data : "");
	strbuf_free(&decoded);
	return 0;
}

/* The line as one printf_matching() (-f): only the message is matched. */
static void matching_line(const struct tool_run *run, const char *needle, const char *format,
			  const char *display, const char *args, struct strbuf *program)
{
	bool time = tool_run_value(run, "TIME") != NULL;
	bool timestamp = !time && tool_run_value(run, "TIMESTAMP") != NULL;
	bool kstack = tool_run_value(run, "KSTACK") != NULL;
	bool ustack = tool_run_value(run, "USTACK") != NULL;
	char *quoted = generator_quote(needle);
	strbuf_printf(program, "\tprintf_matching(%s, \"%s%s%%-7d %%-7d %%-15s %%-16s \\x1f%s\\x1f\\n%s%s\""
		      "%s%s, pid, tid, comm, %s%s%s%s);\n", quoted,
		      time ? "%-8s " : "", timestamp ? "%d.%06d " : "", format,
		      kstack ? "%s\\n" : "", ustack ? "%s\\n" : "",
		      time ? ", strftime(\"%H:%M:%S\", nsecs)" : "",
		      timestamp ? ", elapsed / 1000000000, elapsed / 1000 % 1000000" : "",
		      display, args, kstack ? ", kstack" : "", ustack ? ", ustack" : "");
	free(quoted);
}

#define PREDICATE "/ (PID == 0 || pid == PID) && (TID == 0 || tid == TID) /"

static int generate_probe(const struct tool_run *run, const struct trace_spec *spec,
			  const bcc_target_list *targets, int index, int target,
			  struct strbuf *program, char **error)
{
	const struct bcc_target *probe = &targets->items[target];
	/* types are checked on the first match: one compile, not one per function */
	struct bcc_expr_context context = { spec->text, &spec->params, probe->kind, false,
					    target == 0 ? probe : NULL };
	struct bcc_expr_needs needs = { 0 };
	struct strbuf format, args;
	strbuf_init(&format);
	strbuf_init(&args);
	char *filter = spec->has_filter ? bcc_expr_translate(&context, spec->filter.offset,
							       spec->filter.length, &needs, error)
					: NULL;
	int status = spec->has_filter && !filter ? -EINVAL : 0;
	if (status == 0)
		status = message(spec, &context, &needs, &format, &args, error);
	if (status == 0) {
		const char *name = tool_run_value(run, "NAME");
		char *display = generator_quote(probe->name);
		/* one specifier's functions may call each other: each its own entries */
		char *maps = xasprintf("@bcc_e%d_", index);
		char *key = targets->count > 1 ? xasprintf("tid, %d", target) : xstrdup("tid");
		bcc_entry_probe_write(probe, &context, &needs, maps, key, PREDICATE, program);
		strbuf_printf(program, "%s\n" PREDICATE "\n{\n", probe->probe);
		bcc_body_prologue(&context, &needs, maps, key, program);
		free(maps);
		free(key);
		if (filter)
			strbuf_printf(program, "\tif (!(%s)) {\n\t\treturn;\n\t}\n", filter);
		if (name) {
			char *quoted = generator_quote(name);
			strbuf_printf(program, "\tif (strncmp(comm, %s, %zu) != 0) {\n\t\treturn;\n\t}\n",
				      quoted, strlen(name));
			free(quoted);
		}
		const char *needle = tool_run_value(run, "MSG_FILTER");
		if (needle)
			matching_line(run, needle, format.data ? format.data : "", display,
				      args.data ? args.data : "", program);
		else
			strbuf_printf(program,
			      "\tif (TIME) {\n\t\tprintf(\"%%-8s \", strftime(\"%%H:%%M:%%S\", nsecs));\n"
			      "\t} else if (TIMESTAMP) {\n\t\tprintf(\"%%d.%%06d \", elapsed / 1000000000,"
			      " elapsed / 1000 %% 1000000);\n\t}\n"
			      "\tprintf(\"%%-7d %%-7d %%-15s %%-16s %s\\n\", pid, tid, comm, %s%s);\n"
			      "\tif (KSTACK) {\n\t\tprintf(\"%%s\\n\", kstack);\n\t}\n"
			      "\tif (USTACK) {\n\t\tprintf(\"%%s\\n\", ustack);\n\t}\n",
			      format.data ? format.data : "", display, args.data ? args.data : "");
		strbuf_printf(program,
			      "\tif (MAX_EVENTS > 0) {\n\t\t@bcc_events += 1;\n"
			      "\t\tif (@bcc_events >= MAX_EVENTS) {\n\t\t\texit();\n\t\t}\n\t}\n}\n\n");
		free(display);
	}
	bcc_expr_needs_free(&needs);
	free(filter);
	strbuf_free(&format);
	strbuf_free(&args);
	return status;
}

int trace_generate(const struct tool_run *run, struct strbuf *program, char **error)
{
	bool any_message = false;
	int status = 0;
	strbuf_puts(program, "");
	for (int i = 0; status == 0 && i < run->values.count; i++) {
		const struct tool_value *value = &run->values.items[i];
		struct trace_spec spec;
		bcc_target_list targets = { 0 };
		if (strcmp(value->macro, "PROBES") != 0)
			continue;
		status = trace_spec_parse(value->text, &spec, error);
		if (status == 0)
			status = bcc_probe_expand(&spec.probe, false, &targets, error);
		for (int t = 0; status == 0 && t < targets.count; t++)
			status = generate_probe(run, &spec, &targets, i, t, program, error);
		any_message |= spec.format != NULL;
		bcc_target_list_free(&targets);
		trace_spec_free(&spec);
	}
	if (status == 0 && !tool_run_value(run, "PROBES")) {
		*error = xstrdup("give at least one probe to trace, such as 'do_sys_open' or "
				 "'t:syscalls:sys_enter_openat \"%s\", args->filename'");
		status = -EINVAL;
	}
	if (status == 0)
		strbuf_printf(program, "BEGIN\n{\n\tif (TIME || TIMESTAMP) {\n\t\tprintf(\"%%-8s \", \"TIME\");\n"
			      "\t}\n\tprintf(\"%%-7s %%-7s %%-15s %%-16s %%s\\n\", \"PID\", \"TID\", \"COMM\","
			      " \"FUNC\", \"%s\");\n}\n", any_message ? "-" : "");
	return status;
}
