/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builtin functions, family: the program's own command-line options.
 * getopt("name"[, default[, "description"]]) is current bpftrace's named
 * argument: the value of --name or --name=VALUE given after the program
 * (after "--"), or the default. Like a positional parameter it is a
 * compile-time constant. Each name is recorded once in program->options
 * with its default and description (bpftrace's third argument), for the
 * listing `-- --help` prints; every getopt() of one name must give the same
 * default, as in bpftrace.
 */
#include "family.h"

#include <stdio.h>

/* The value of --name on the command line ("" for a bare --name), NULL when
 * it is not given; marks the argument used. The last one given wins. */
static const char *named_value(const struct compile_options *options, const char *name)
{
	const char *value = NULL;
	size_t length = strlen(name);
	for (int i = 0; i < options->named_count; i++) {
		const char *word = options->named[i];
		if (strncmp(word, name, length) != 0 || (word[length] != '\0' && word[length] != '='))
			continue;
		if (options->named_used)
			options->named_used[i] = true;
		value = word[length] == '=' ? word + length + 1 : "";
	}
	return value;
}

/* What the default says the argument is. */
enum getopt_kind { GETOPT_BOOL, GETOPT_INT, GETOPT_STRING };

static enum getopt_kind getopt_kind(const struct node *call)
{
	const struct node *fallback = call->args->next;
	if (!fallback || (fallback->type && fallback->type->is_bool))
		return GETOPT_BOOL;
	return fallback->kind == NODE_STRING ? GETOPT_STRING : GETOPT_INT;
}

/* Records the option the first time its name is read; a later getopt() of
 * the name must give the same default. false after reporting that it does not. */
static bool note_option(struct sema *sema, const struct node *call, enum getopt_kind kind)
{
	const struct node *name = call->args, *fallback = name->next;
	const struct node *description = fallback ? fallback->next : NULL;
	static const char *const kinds[] = { "BOOL", "INTEGER", "STRING" };
	char *text;

	if (kind == GETOPT_STRING)
		text = xasprintf("\"%s\"", fallback->string_value);
	else if (kind == GETOPT_BOOL)
		text = xstrdup(fallback && fallback->const_value ? "true" : "false");
	else
		text = xasprintf("%lld", (long long)fallback->const_value);
	for (int i = 0; i < sema->program->options.count; i++) {
		struct program_option *known = &sema->program->options.items[i];
		if (strcmp(known->name, name->string_value) != 0)
			continue;
		bool same = strcmp(known->kind, kinds[kind]) == 0 && strcmp(known->fallback, text) == 0;
		if (!same)
			sema_error(sema, call->loc, "getopt(\"%s\") has the default %s here but %s "
				   "where the program first reads it: give every use the same default",
				   known->name, text, known->fallback);
		if (!known->description && description)
			known->description = xstrdup(description->string_value);
		free(text);
		return same;
	}
	struct program_option option = {
		.name = xstrdup(name->string_value),
		.kind = kinds[kind],
		.fallback = text,
		.description = description ? xstrdup(description->string_value) : NULL,
	};
	vec_push(&sema->program->options, option);
	return true;
}

static void check_getopt(struct sema *sema, struct node *call)
{
	struct node *name = call->args, *fallback = name->next;
	struct node *description = fallback ? fallback->next : NULL;
	call->type = type_none();
	if (name->kind != NODE_STRING || name->string_length == 0 ||
	    strlen(name->string_value) != (size_t)name->string_length) {
		sema_error(sema, name->loc, "getopt()'s first argument must be the option's name as a "
			   "string literal");
		return;
	}
	if (fallback) {
		sema_check_expr(sema, fallback);
		if (fallback->kind != NODE_STRING && !sema_is_int_constant(fallback)) {
			sema_error(sema, fallback->loc, "getopt()'s default must be a string, integer or "
				   "bool literal");
			return;
		}
	}
	if (description && description->kind != NODE_STRING) {
		sema_error(sema, description->loc, "getopt()'s description must be a string literal");
		return;
	}
	const char *option = name->string_value;
	const char *text = named_value(sema->options, option);
	enum getopt_kind kind = getopt_kind(call);
	if (!note_option(sema, call, kind))
		return;
	if (kind == GETOPT_STRING) {
		if (!text)
			text = fallback->string_value;
		int length = (int)strlen(text);
		if (length > sema->options->max_strlen - 1)
			length = sema->options->max_strlen - 1;
		call->type = type_string(length + 1);
		return;
	}
	call->is_constant = true;
	if (kind == GETOPT_BOOL) {
		call->type = type_bool();
		call->const_value = fallback ? fallback->const_value != 0 : 0;
		if (!text)
			return;
		if (*text == '\0' || strcmp(text, "true") == 0 || strcmp(text, "1") == 0)
			call->const_value = 1;
		else if (strcmp(text, "false") == 0 || strcmp(text, "0") == 0)
			call->const_value = 0;
		else
			sema_error(sema, call->loc, "--%s=%s: option '%s' is a flag (true, false, 1 or 0)",
				   option, text, option);
		return;
	}
	call->type = type_int(8, true);
	call->const_value = fallback->const_value;
	if (!text)
		return;
	char *end;
	errno = 0;
	long long value = strtoll(text, &end, 0);
	if (*text == '\0' || *end != '\0' || errno != 0)
		sema_error(sema, call->loc, "--%s%s%s: option '%s' needs an integer", option,
			   *text ? "=" : "", text, option);
	else
		call->const_value = (uint64_t)value;
}

static struct value generate_getopt(struct codegen *gen, struct node *call)
{
	if (call->type->kind == TYPE_STRING) {
		const char *text = named_value(gen->sema->options, call->args->string_value);
		if (!text)
			text = call->args->next->string_value;
		return gen_string_constant(gen, text, call->type->size - 1, call->type);
	}
	return value_reg(gen_const_reg(gen, (int64_t)call->const_value), call->type);
}

const struct function_def builtins_options[] = {
	{ FUNCTION(getopt, 1, 3) },
	{ 0 },
};
