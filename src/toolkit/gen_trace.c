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
 * can use the signature's parameters, which are variables set there.
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

#include "bccspec.h"

/* What one specifier says, split into its parts. */
struct trace_spec {
	struct bcc_probe probe;
	bcc_param_list params;
	char *filter;        /* NULL if none */
	char *format;        /* the text between the quotes; NULL if none */
	VEC(char *) args;
};

static void trace_spec_free(struct trace_spec *spec)
{
	bcc_probe_free(&spec->probe);
	bcc_params_free(&spec->params);
	free(spec->filter);
	free(spec->format);
	for (int i = 0; i < spec->args.count; i++)
		free(spec->args.items[i]);
	free(spec->args.items);
}

static const char *skip_blanks(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* spec = head [ '(' filter ')' ] [ '"' format '"' { ',' arg } ] */
static int trace_spec_parse(const char *text, struct trace_spec *spec, char **error)
{
	size_t used;
	memset(spec, 0, sizeof(*spec));
	int status = bcc_probe_parse_head(text, BCC_ALLOW_RETURN, &spec->probe, &spec->params,
					  &used, error);
	if (status < 0)
		return status;
	const char *p = skip_blanks(text + used);
	if (*p == '(') {
		size_t length = bcc_scan_until(p + 1, ")");
		if (p[1 + length] != ')') {
			*error = xasprintf("the filter in '%s' has no closing ')'", text);
			return -EINVAL;
		}
		spec->filter = xstrndup(p + 1, length);
		p = skip_blanks(p + length + 2);
	}
	if (*p == '"') {
		const char *q = p + 1;
		while (*q && *q != '"')
			q += q[0] == '\\' && q[1] ? 2 : 1;
		if (*q != '"') {
			*error = xasprintf("the format in '%s' has no closing '\"'", text);
			return -EINVAL;
		}
		spec->format = xstrndup(p + 1, (size_t)(q - p - 1));
		p = skip_blanks(q + 1);
		while (*p == ',') {
			size_t length_arg = bcc_scan_until(p + 1, ",");
			char *arg = xstrndup(p + 1, length_arg);
			vec_push(&spec->args, arg);
			p = skip_blanks(p + 1 + length_arg);
		}
	}
	if (*p) {
		*error = xasprintf("unexpected '%s' in '%s' (expected [(filter)] [\"format\", args])",
				   p, text);
		return -EINVAL;
	}
	return 0;
}

/* Rewrites one expression, failing for argdist's entry-time specials. */
static char *rewrite(const struct trace_spec *spec, const char *text, char **error)
{
	struct bcc_expr_needs needs = { 0 };
	char *out = bcc_expr_rewrite(text, strlen(text), &spec->params, spec->probe.kind, &needs,
				     error);
	if (out && (needs.latency || needs.entries.count)) {
		*error = xasprintf("'%s': $latency and $entry() are argdist's, not trace's", text);
		free(out);
		out = NULL;
	}
	bcc_expr_needs_free(&needs);
	return out;
}

/* The format with %K/%U turned into %s, and the arguments that feed it. */
static int message(const struct trace_spec *spec, struct strbuf *format, struct strbuf *args,
		   char **error)
{
	int used = 0;
	for (const char *p = spec->format ? spec->format : ""; *p; p++) {
		strbuf_putc(format, *p == '%' ? '%' : *p);
		if (*p != '%')
			continue;
		if (p[1] == '%') {
			strbuf_putc(format, *++p);
			continue;
		}
		const char *conversion = p + 1 + strspn(p + 1, "-+ #0123456789.hlzjt");
		if (!*conversion)
			break;
		strbuf_printf(format, "%.*s", (int)(conversion - p - 1), p + 1);
		if (used == spec->args.count) {
			*error = xasprintf("the format \"%s\" has more conversions than arguments",
					   spec->format);
			return -EINVAL;
		}
		char *arg = rewrite(spec, spec->args.items[used++], error);
		if (!arg)
			return -EINVAL;
		const char *wrap = *conversion == 's' ? "str" : *conversion == 'K' ? "ksym"
				 : *conversion == 'U' ? "usym" : NULL;
		strbuf_putc(format, *conversion == 'K' || *conversion == 'U' ? 's' : *conversion);
		if (wrap)
			strbuf_printf(args, ", %s(%s)", wrap, arg);
		else
			strbuf_printf(args, ", %s", arg);
		free(arg);
		p = conversion;
	}
	if (used < spec->args.count) {
		*error = xasprintf("the format \"%s\" has fewer conversions than arguments (%d)",
				   spec->format ? spec->format : "", spec->args.count);
		return -EINVAL;
	}
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

static int generate_probe(const struct tool_run *run, const struct trace_spec *spec,
			  const struct bcc_target *target, struct strbuf *program, char **error)
{
	struct strbuf format, args;
	strbuf_init(&format);
	strbuf_init(&args);
	int status = message(spec, &format, &args, error);
	char *filter = status == 0 && spec->filter ? rewrite(spec, spec->filter, error) : NULL;
	if (spec->filter && !filter)
		status = -EINVAL;
	if (status == 0) {
		const char *name = tool_run_value(run, "NAME");
		char *display = generator_quote(target->name);
		strbuf_printf(program, "%s\n/ (PID == 0 || pid == PID) && (TID == 0 || tid == TID) /\n{\n",
			      target->probe);
		bcc_params_declare(&spec->params, program);
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
			status = generate_probe(run, &spec, &targets.items[t], program, error);
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
