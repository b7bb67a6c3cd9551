/* SPDX-License-Identifier: Apache-2.0 */
/*
 * argdist's program. Each -H (histogram) or -C (count) specifier,
 *
 *   {p|r|t|u}:{lib|category}:function(signature)[:type[,type]:expr[,expr][:filter]][#label]
 *
 * becomes its own map (@bcc_h0, @bcc_c1...) updated by one probe per
 * matching function, and one block that prints every map each INTERVAL
 * seconds and at the end. A return probe that uses $latency or a
 * parameter ($entry(p) or p) gets an entry probe that saves the time and
 * the parameters per thread (bccspec.c's bcc_entry_probe_write). Every
 * expression and filter is translated and checked by bcc_expr_translate,
 * never pasted as text.
 */
#include "generator.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bccspec.h"

struct argdist_spec {
	const char *text;    /* as written */
	bool histogram;      /* -H, else -C */
	struct bcc_probe probe;
	bcc_param_list params;
	VEC(char *) types;
	VEC(char *) exprs;   /* as written */
	VEC(size_t) expr_offsets; /* where each starts in text, for errors */
	char *filter;
	size_t filter_offset;
	char *label;
};

static void free_words(char **words, int count)
{
	for (int i = 0; i < count; i++)
		free(words[i]);
	free(words);
}

static void argdist_spec_free(struct argdist_spec *spec)
{
	bcc_probe_free(&spec->probe);
	bcc_params_free(&spec->params);
	free_words(spec->types.items, spec->types.count);
	free_words(spec->exprs.items, spec->exprs.count);
	free(spec->expr_offsets.items);
	free(spec->filter);
	free(spec->label);
}

/* Splits text[0..length) at unnested commas; with offsets, records where
 * each part starts in text (plus base). */
static void split_commas(const char *text, size_t length, void *list_vec, size_t base,
			 void *offsets_vec)
{
	VEC(char *) *list = list_vec;
	VEC(size_t) *offsets = offsets_vec;
	char *copy = xstrndup(text, length);
	for (const char *p = copy;;) {
		size_t part = bcc_scan_until(p, ",");
		char *item = xstrndup(p, part);
		vec_push(list, item);
		if (offsets) {
			size_t offset = base + (size_t)(p - copy);
			vec_push(offsets, offset);
		}
		if (!p[part])
			break;
		p += part + 1;
	}
	free(copy);
}

static int argdist_spec_parse(const char *text, bool histogram, struct argdist_spec *spec,
			      char **error)
{
	memset(spec, 0, sizeof(*spec));
	spec->text = text;
	spec->histogram = histogram;
	size_t used;
	int status = bcc_probe_parse_head(text, BCC_ALLOW_RETURN, &spec->probe, &spec->params, &used,
					  error);
	if (status < 0)
		return status;
	if (text[used] && text[used] != ':' && text[used] != '#') {
		*error = xasprintf("'%s': write the signature after the function, '()' if none", text);
		return -EINVAL;
	}
	const char *p = text + used;
	if (*p == ':') {
		size_t types = bcc_scan_until(p + 1, ":#");
		split_commas(p + 1, types, &spec->types, 0, NULL);
		p += 1 + types;
		if (*p != ':') {
			*error = xasprintf("'%s': the types need expressions, type:expr", text);
			return -EINVAL;
		}
		size_t exprs = bcc_scan_until(p + 1, ":#");
		split_commas(p + 1, exprs, &spec->exprs, (size_t)(p + 1 - text), &spec->expr_offsets);
		p += 1 + exprs;
		if (*p == ':') {
			size_t filter = bcc_scan_until(p + 1, "#");
			spec->filter = xstrndup(p + 1, filter);
			spec->filter_offset = (size_t)(p + 1 - text);
			p += 1 + filter;
		}
		if (spec->types.count != spec->exprs.count) {
			*error = xasprintf("'%s' has %d types for %d expressions", text,
					   spec->types.count, spec->exprs.count);
			return -EINVAL;
		}
	}
	if (*p == '#')
		spec->label = xstrdup(p + 1);
	if (histogram && spec->exprs.count > 1) {
		*error = xasprintf("'%s': a histogram (-H) takes one expression", text);
		return -EINVAL;
	}
	if (spec->exprs.count == 0) {
		/* BCC's defaults: the return value of a return probe, else the calls */
		bool ret = bcc_kind_is_return(spec->probe.kind);
		if (histogram && !ret) {
			*error = xasprintf("'%s': a histogram (-H) needs an expression", text);
			return -EINVAL;
		}
		char *type = xstrdup(ret ? "s64" : "u64");
		char *expr = xstrdup(ret ? "$retval" : "");
		vec_push(&spec->types, type);
		vec_push(&spec->exprs, expr);
		/* not written: an error in it has no place in the text */
		size_t offset = strlen(text);
		vec_push(&spec->expr_offsets, offset);
	}
	return 0;
}

static bool is_string_type(const char *type)
{
	return strncmp(type, "char", 4) == 0 && strchr(type, '*');
}

/* The map update of spec number `index`, for the probe's body. */
static int update(const struct argdist_spec *spec, int index, const struct bcc_expr_context *context,
		  struct strbuf *body, struct bcc_expr_needs *needs, char **error)
{
	struct strbuf key;
	strbuf_init(&key);
	for (int i = 0; i < spec->exprs.count; i++) {
		const char *written = spec->exprs.items[i];
		if (!written[0]) {
			strbuf_puts(&key, "\"total calls\"");
			continue;
		}
		char *expr = spec->expr_offsets.items[i] < strlen(spec->text)
			? bcc_expr_translate(context, spec->expr_offsets.items[i], strlen(written), needs,
					     error)
			: xstrdup("retval");  /* BCC's default for a return probe */
		if (!expr) {
			strbuf_free(&key);
			return -EINVAL;
		}
		char *value = is_string_type(spec->types.items[i]) ? xasprintf("str(%s)", expr)
				: bcc_type_cast(spec->types.items[i], expr);
		strbuf_printf(&key, "%s%s", i ? ", " : "", value);
		free(value);
		free(expr);
	}
	if (spec->filter) {
		char *filter = bcc_expr_translate(context, spec->filter_offset, strlen(spec->filter),
						  needs, error);
		if (!filter) {
			strbuf_free(&key);
			return -EINVAL;
		}
		strbuf_printf(body, "\tif (!(%s)) {\n\t\treturn;\n\t}\n", filter);
		free(filter);
	}
	if (spec->histogram)
		strbuf_printf(body, "\t@bcc_h%d = hist(%s);\n", index, key.data);
	else
		strbuf_printf(body, "\t@bcc_c%d[%s] = count();\n", index, key.data);
	strbuf_free(&key);
	return 0;
}

#define PREDICATE "/ (PID == 0 || pid == PID) && (TID == 0 || tid == TID) /"

static int generate_spec(const struct argdist_spec *spec, int index, struct strbuf *program,
			 char **error)
{
	bcc_target_list targets = { 0 };
	int status = bcc_probe_expand(&spec->probe, false, &targets, error);
	for (int t = 0; status == 0 && t < targets.count; t++) {
		/* types are checked on the first match: one compile, not one per function */
		struct bcc_expr_context context = { spec->text, &spec->params, targets.items[t].kind,
						    true, t == 0 ? &targets.items[t] : NULL };
		struct bcc_expr_needs needs = { 0 };
		struct strbuf body;
		strbuf_init(&body);
		status = update(spec, index, &context, &body, &needs, error);
		if (status == 0) {
			/* one specifier's functions may call each other: each its own entries */
			char *maps = xasprintf("@bcc_e%d_", index);
			char *key = targets.count > 1 ? xasprintf("tid, %d", t) : xstrdup("tid");
			bcc_entry_probe_write(&targets.items[t], &context, &needs, maps, key, PREDICATE,
					      program);
			strbuf_printf(program, "%s\n" PREDICATE "\n{\n", targets.items[t].probe);
			bcc_body_prologue(&context, &needs, maps, key, program);
			strbuf_printf(program, "%s}\n\n", body.data);
			free(maps);
			free(key);
		}
		strbuf_free(&body);
		bcc_expr_needs_free(&needs);
	}
	bcc_target_list_free(&targets);
	return status;
}

/* text with its '%' doubled, to be printed by a format */
static char *format_text(const char *text)
{
	struct strbuf out;
	strbuf_init(&out);
	for (const char *p = text; *p; p++) {
		if (*p == '%')
			strbuf_putc(&out, '%');
		strbuf_putc(&out, *p);
	}
	return strbuf_release(&out);
}

/* The printing of spec number `index`, in the interval block. */
static void print_spec(const struct argdist_spec *spec, int index, long top, struct strbuf *program)
{
	char *label = generator_quote(spec->label ? spec->label
					: !spec->exprs.items[0][0] ? "total calls"
					: strcmp(spec->exprs.items[0], "$retval") == 0 ? "retval"
					: spec->exprs.items[0]);
	if (spec->histogram) {
		strbuf_printf(program, "\tprint_log2_hist(@bcc_h%d, %s);\n", index, label);
	} else {
		struct strbuf row;
		strbuf_init(&row);
		strbuf_puts(&row, "\\t");
		for (int i = 0; i < spec->exprs.count; i++) {
			const char *expr = spec->exprs.items[i];
			const char *type = spec->types.items[i];
			const char *conversion = is_string_type(type) ? "%s"
					       : type[0] == 'u' || strcmp(type, "size_t") == 0 ? "%llu"
					       : "%lld";
			if (!expr[0]) {
				strbuf_puts(&row, "%s");
				continue;
			}
			char *literal = format_text(expr);
			generator_escape(&row, literal);
			free(literal);
			strbuf_printf(&row, " = %s%s", conversion, i + 1 < spec->exprs.count ? ", " : "");
		}
		/* JSON's field names: one per key column, then the count */
		struct strbuf names;
		strbuf_init(&names);
		for (int i = 0; spec->exprs.count > 1 && i < spec->exprs.count; i++)
			strbuf_printf(&names, "value%d ", i + 1);
		strbuf_puts(&names, spec->exprs.count > 1 ? "count" : "value count");
		char *title = generator_quote(spec->label ? spec->label : spec->text);
		strbuf_printf(program, "\tif (!JSON) {\n\t\tprintf(\"%%s\\n\\t%%-40s %%s\\n\", %s, \"EVENT\","
			      " \"COUNT\");\n\t}\n\tprint_top(@bcc_c%d, %ld, \"%s\", \"%s\\t%%d\\n\");\n",
			      title, index, top, names.data, row.data);
		free(title);
		strbuf_free(&names);
		strbuf_free(&row);
	}
	free(label);
}

int argdist_generate(const struct tool_run *run, struct strbuf *program, char **error)
{
	VEC(struct argdist_spec) specs = { 0 };
	int status = 0;
	for (int i = 0; status == 0 && i < run->values.count; i++) {
		const struct tool_value *value = &run->values.items[i];
		bool histogram = strcmp(value->macro, "HISTOGRAM") == 0;
		if (!histogram && strcmp(value->macro, "COUNTS") != 0)
			continue;
		struct argdist_spec spec;
		status = argdist_spec_parse(value->text, histogram, &spec, error);
		if (status == 0)
			status = generate_spec(&spec, specs.count, program, error);
		vec_push(&specs, spec);
	}
	if (status == 0 && specs.count == 0) {
		*error = xstrdup("give at least one -H or -C specifier, such as "
				 "-H 't:syscalls:sys_exit_read():int:args->ret'");
		status = -EINVAL;
	}
	const char *top_text = tool_run_value(run, "TOP");
	long top = top_text ? strtol(top_text, NULL, 10) : 0;
	if (status == 0) {
		strbuf_puts(program, "interval:s:INTERVAL, END\n/ @bcc_done == 0 /\n{\n\tif (!JSON) {\n"
			    "\t\tprintf(\"[%s]\\n\", strftime(\"%H:%M:%S\", nsecs));\n\t}\n");
		for (int i = 0; i < specs.count; i++)
			print_spec(&specs.items[i], i, top > 0 ? top : 1000000, program);
		strbuf_puts(program, "\tif (!CUMULATIVE) {\n");
		for (int i = 0; i < specs.count; i++)
			strbuf_printf(program, "\t\tclear(@bcc_%c%d);\n", specs.items[i].histogram ? 'h' : 'c', i);
		strbuf_puts(program, "\t}\n\t@bcc_outputs += 1;\n\tif (COUNT > 0 && @bcc_outputs >= COUNT) {\n"
			    "\t\t@bcc_done = 1;\n\t\texit();\n\t}\n}\n");
	}
	for (int i = 0; i < specs.count; i++)
		argdist_spec_free(&specs.items[i]);
	free(specs.items);
	return status;
}
