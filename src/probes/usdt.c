/* SPDX-License-Identifier: Apache-2.0 */
/*
 * usdt:BINARY:[PROVIDER:]NAME — user-level statically defined tracing:
 * probes compiled into a program with <sys/sdt.h> (DTRACE_PROBE, STAP_PROBE).
 *
 * Each probe is a nop in the code plus a `.note.stapsdt` note (read by
 * kernel/elf.c) giving its address, an optional semaphore and a string that
 * says where each argument is at the nop, in the assembler's operand
 * syntax: "-4@%edi 8@-8(%rbp) 4@$5 8@(%rax,%rdx,8)". A probe is a uprobe on
 * the nop; its arguments become arg_locations that the code generator reads
 * from pt_regs (registers), with probe_read_user (memory) or as constants.
 *
 * A semaphore is a 2-byte counter in the program's data that guards the
 * work of preparing arguments (`if (FOO_BAR_ENABLED())`). The uprobe PMU
 * takes its file offset as a reference counter, and the kernel then raises
 * it in every process while the probe is attached and lowers it after.
 *
 * The same provider:name can appear at several places (a probe in an
 * inlined function); each becomes its own point with its own argument
 * locations, all sharing one name.
 */
#include "provider.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>

#include "../kernel/elf.h"

extern const struct provider usdt_provider;

/* ---- argument strings ---- */


/* "%edi" at *p → pt_regs offset, advancing *p; -1 if not a register we read. */
static int parse_register(const char **p)
{
	const char *start = *p + 1;
	size_t length = 0;

	if (**p != '%')
		return -1;
	while (isalnum((unsigned char)start[length]))
		length++;
	int offset = arch_asm_register_offset(start, length);
	if (offset >= 0)
		*p = start + length;
	return offset;
}

/* A signed number in C syntax (decimal or 0x hex) at *p. */
static bool parse_number(const char **p, int64_t *value)
{
	const char *start = *p;
	char *end;
	bool negative = false;

	if (*start == '-' || *start == '+') {
		negative = *start == '-';
		start++;
	}
	if (!isdigit((unsigned char)*start))
		return false;
	errno = 0;
	uint64_t magnitude = strtoull(start, &end, 0);
	if (errno)
		return false;
	*value = negative ? -(int64_t)magnitude : (int64_t)magnitude;
	*p = end;
	return true;
}

struct arg_parser {
	const char *argument;   /* the whole "N@operand" being decoded, for messages */
	uint64_t probe_address;
	usdt_symbol_lookup lookup;
	void *context;
	char **error;
};

static int parse_error(struct arg_parser *parser, const char *why)
{
	*parser->error = xasprintf("cannot decode USDT argument '%s': %s", parser->argument, why);
	return -EINVAL;
}

/*
 * operand = '%' register
 *         | '$' number
 *         | [displacement] '(' ['%' base] [',' '%' index [',' scale]] ')'
 *         | symbol ['+'|'-' number]            (an absolute address)
 * displacement = number | symbol ['+'|'-' number]
 */
static int parse_operand(struct arg_parser *parser, const char *p, struct arg_location *location)
{
	int64_t displacement = 0;
	bool has_symbol = false;

	location->index_offset = -1;
	location->scale = 1;
	if (*p == '%') {
		location->kind = ARG_LOCATION_REGISTER;
		location->register_offset = parse_register(&p);
		if (location->register_offset < 0)
			return parse_error(parser, "unknown or unsupported register");
		if (*p)
			return parse_error(parser, "unexpected text after the register");
		return 0;
	}
	if (*p == '$') {
		p++;
		location->kind = ARG_LOCATION_CONSTANT;
		if (!parse_number(&p, &location->displacement) || *p)
			return parse_error(parser, "the constant is not a number");
		return 0;
	}

	location->kind = ARG_LOCATION_MEMORY;
	if (isalpha((unsigned char)*p) || *p == '_' || *p == '.') {
		const char *start = p;
		while (isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '$')
			p++;
		char *symbol = xstrndup(start, (size_t)(p - start));
		uint64_t address;
		bool found = parser->lookup && parser->lookup(parser->context, symbol, &address);
		free(symbol);
		if (!found)
			return parse_error(parser, "it names a symbol the object does not define");
		displacement = (int64_t)address;
		has_symbol = true;
		if (*p == '+' || *p == '-') {
			int64_t addend;
			if (!parse_number(&p, &addend))
				return parse_error(parser, "bad offset after the symbol");
			displacement += addend;
		}
	} else if (*p != '(') {
		if (!parse_number(&p, &displacement))
			return parse_error(parser, "expected a register, a constant or a memory operand");
	}

	if (*p != '(') {
		if (!has_symbol)
			return parse_error(parser, "absolute addresses are not supported");
		/* A symbol alone is an absolute address: relative to the probe,
		 * like %rip, so a moved object still reads the right byte. */
		location->register_offset = ARCH_INSTRUCTION_POINTER;
		displacement -= (int64_t)parser->probe_address;
	} else {
		p++;
		location->register_offset = parse_register(&p);
		if (location->register_offset < 0)
			return parse_error(parser, "memory operands need a base register");
		if (location->register_offset == ARCH_INSTRUCTION_POINTER && has_symbol)
			/* symbol(%rip) is the symbol's address; the ip the
			 * program sees is the probe's own address. */
			displacement -= (int64_t)parser->probe_address;
		if (*p == ',') {
			p++;
			location->index_offset = parse_register(&p);
			if (location->index_offset < 0)
				return parse_error(parser, "unknown index register");
			if (*p == ',') {
				int64_t scale;
				p++;
				if (!parse_number(&p, &scale) ||
				    (scale != 1 && scale != 2 && scale != 4 && scale != 8))
					return parse_error(parser, "the scale must be 1, 2, 4 or 8");
				location->scale = (int)scale;
			}
		}
		if (*p != ')' || p[1])
			return parse_error(parser, "malformed memory operand");
	}
	if (displacement < INT32_MIN || displacement > INT32_MAX)
		return parse_error(parser, "the displacement does not fit in 32 bits");
	location->displacement = displacement;
	return 0;
}

/* argument = ['-'] size '@' operand, or a bare operand (an 8-byte value). */
static int parse_argument(struct arg_parser *parser, const char *text,
			  struct arg_location *location)
{
	const char *at = strchr(text, '@');
	const char *operand = text;

	location->size = 8;
	location->is_signed = false;
	if (at && at != text && (isdigit((unsigned char)text[0]) || text[0] == '-')) {
		const char *p = text;
		int64_t size;
		if (!parse_number(&p, &size) || p != at)
			return parse_error(parser, "the size before '@' is not a number");
		location->is_signed = size < 0;
		size = size < 0 ? -size : size;
		if (size != 1 && size != 2 && size != 4 && size != 8)
			return parse_error(parser, "the size must be 1, 2, 4 or 8 bytes");
		location->size = (int)size;
		operand = at + 1;
	}
	return parse_operand(parser, operand, location);
}

int usdt_parse_arguments(const char *text, uint64_t probe_address, usdt_symbol_lookup lookup,
			 void *context, struct arg_location **locations, char **error)
{
	VEC(struct arg_location) found = { 0 };
	struct arg_parser parser = { NULL, probe_address, lookup, context, error };
	const char *p = text ? text : "";

	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		const char *start = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		char *argument = xstrndup(start, (size_t)(p - start));
		struct arg_location location = { 0 };
		parser.argument = argument;
		int err = parse_argument(&parser, argument, &location);
		free(argument);
		if (err) {
			free(found.items);
			*locations = NULL;
			return err;
		}
		vec_push(&found, location);
	}
	*locations = found.items;
	return found.count;
}

/* ---- specs ---- */

static bool lookup_in_object(void *context, const char *name, uint64_t *address)
{
	struct elf_symbol symbol;

	if (elf_object_find_symbol(context, name, &symbol) < 0)
		return false;
	*address = symbol.address;
	return true;
}

static int compare_notes(const void *a, const void *b)
{
	const struct stapsdt_note *left = a, *right = b;
	int order = strcmp(left->provider, right->provider);

	if (order == 0)
		order = strcmp(left->name, right->name);
	if (order == 0 && left->pc != right->pc)
		order = left->pc < right->pc ? -1 : 1;
	return order;
}

/* The object's notes, sorted by provider and name (the -l order). */
static int read_notes(const char *path, struct elf_object **object, stapsdt_note_list *notes,
		      char **error)
{
	int err = elf_object_open(path, object, error);

	if (err)
		return err;
	err = elf_object_stapsdt_notes(*object, notes);
	if (err) {
		*error = xasprintf("cannot read the USDT notes of %s", path);
		elf_object_close(*object);
		*object = NULL;
		return err;
	}
	if (notes->count > 1)
		qsort(notes->items, (size_t)notes->count, sizeof(*notes->items), compare_notes);
	return 0;
}

static int note_to_point(struct elf_object *object, const char *path,
			 const struct stapsdt_note *note, probe_point_list *out, char **error)
{
	struct probe_point *point;
	uint64_t offset, semaphore_offset = 0;
	struct arg_location *locations = NULL;
	char *name;
	int count;

	if (elf_object_address_to_offset(object, note->pc, &offset) < 0) {
		*error = xasprintf("USDT probe %s:%s in %s is at 0x%" PRIx64 ", outside every "
				   "loadable segment", note->provider, note->name, path, note->pc);
		return -EINVAL;
	}
	if (note->semaphore &&
	    elf_object_address_to_offset(object, note->semaphore, &semaphore_offset) < 0) {
		*error = xasprintf("the semaphore of USDT probe %s:%s in %s is outside every "
				   "loadable segment", note->provider, note->name, path);
		return -EINVAL;
	}
	count = usdt_parse_arguments(note->arguments, note->pc, lookup_in_object, object,
				     &locations, error);
	if (count < 0) {
		char *detail = *error;
		*error = xasprintf("USDT probe %s:%s in %s: %s", note->provider, note->name, path,
				   detail);
		free(detail);
		return count;
	}
	name = xasprintf("usdt:%s:%s:%s", path, note->provider, note->name);
	point = probe_point_new(&usdt_provider, name);
	free(name);
	point->target = xstrdup(note->provider);
	point->function = xstrdup(note->name);
	point->binary_path = xstrdup(path);
	point->binary_offset = offset;
	point->semaphore_offset = semaphore_offset;
	point->args_access = ARGS_PT_REGS;
	point->arg_count = count;
	point->arg_locations = locations;
	point->features = PROBE_HAS_ARGN;
	vec_push(out, point);
	return 0;
}

/* Adds the probes of one object that match; counts them in *matched. */
static int expand_in_object(const char *path, const char *provider_pattern, const char *name_pattern,
			    probe_point_list *out, int *matched, int *note_count, char **error)
{
	struct elf_object *object;
	stapsdt_note_list notes = { 0 };
	int err = read_notes(path, &object, &notes, error);
	if (err)
		return err;
	*note_count += notes.count;
	for (int i = 0; i < notes.count && !err; i++) {
		const struct stapsdt_note *note = &notes.items[i];
		if (!wildcard_match(provider_pattern, note->provider) ||
		    !wildcard_match(name_pattern, note->name))
			continue;
		err = note_to_point(object, path, note, out, error);
		(*matched)++;
	}
	stapsdt_note_list_free(&notes);
	elf_object_close(object);
	return err;
}

/* usdt:BINARY:[PROVIDER:]NAME; with -p also usdt:*:PROVIDER:NAME and
 * usdt:PROVIDER:NAME, which search every object the process maps. */
static int usdt_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	const char *provider_pattern, *name_pattern;
	char *path = NULL;
	int err = 0, matched = 0, note_count = 0;

	if (spec->part_count < 2 || spec->part_count > 3 || !spec->parts[0][0] ||
	    !spec->parts[spec->part_count - 1][0]) {
		*error = xasprintf("usdt probes are written usdt:BINARY:[PROVIDER:]NAME "
				   "(e.g. usdt:/usr/bin/python3:python:function__entry)");
		return -EINVAL;
	}
	bool whole_process = spec->pid &&
			     (strcmp(spec->parts[0], "*") == 0 ||
			      (spec->part_count == 2 && elf_resolve_binary(spec->parts[0], 0, &path) < 0));
	free(path);
	path = NULL;
	if (whole_process) {
		bool binary_given = strcmp(spec->parts[0], "*") == 0;
		provider_pattern = spec->part_count == 3 || !binary_given ? spec->parts[spec->part_count - 2] : "*";
		name_pattern = spec->parts[spec->part_count - 1];
		path_list objects = { 0 };
		if (elf_process_objects(spec->pid, &objects) < 0) {
			*error = xasprintf("cannot read the objects mapped into process %d", (int)spec->pid);
			return -ENOENT;
		}
		for (int i = 0; i < objects.count && !err; i++) {
			char *ignored = NULL;
			/* objects without USDT notes are simply not candidates */
			if (expand_in_object(objects.items[i], provider_pattern, name_pattern, out,
					     &matched, &note_count, &ignored) < 0)
				free(ignored);
		}
		path_list_free(&objects);
		if (matched == 0) {
			*error = xasprintf("no USDT probe in process %d matches '%s:%s'", (int)spec->pid,
					   provider_pattern, name_pattern);
			return -ENOENT;
		}
		return 0;
	}
	if (has_wildcard(spec->parts[0])) {
		*error = xasprintf("wildcards in the binary of a usdt probe need -p PID ('%s')",
				   spec->parts[0]);
		return -EINVAL;
	}
	provider_pattern = spec->part_count == 3 ? spec->parts[1] : "*";
	name_pattern = spec->parts[spec->part_count - 1];
	if (elf_resolve_binary(spec->parts[0], 0, &path) < 0) {
		*error = xasprintf("usdt target file '%s' does not exist or is not readable",
				   spec->parts[0]);
		return -ENOENT;
	}
	err = expand_in_object(path, provider_pattern, name_pattern, out, &matched, &note_count, error);
	if (!err && matched == 0) {
		if (note_count == 0)
			*error = xasprintf("%s has no USDT probes", path);
		else
			*error = xasprintf("no USDT probe in %s matches '%s:%s'", path,
					   provider_pattern, name_pattern);
		err = -ENOENT;
	}
	free(path);
	return err;
}

static int usdt_describe(struct probe_point *point, char **error)
{
	point->args_access = ARGS_PT_REGS;
	point->features = PROBE_HAS_ARGN;
	return 0;
}

static int usdt_attach(const struct probe_point *point, int prog_fd, fd_list *fds, char **error)
{
	return probe_attach_uprobe(point, false, prog_fd, fds, error);
}

/* The probes of one object whose full names match `pattern`, one line each
 * ("usdt:/path:provider:name"), a probe at several places once; verbose
 * adds the argument string of the first place. */
static int list_object(const char *path, const char *pattern, bool verbose, FILE *out,
		       char **error)
{
	struct elf_object *object = NULL;
	stapsdt_note_list notes = { 0 };
	int err = read_notes(path, &object, &notes, error);

	if (err)
		return err;
	for (int i = 0; i < notes.count; i++) {
		const struct stapsdt_note *note = &notes.items[i];
		if (i > 0 && strcmp(notes.items[i - 1].provider, note->provider) == 0 &&
		    strcmp(notes.items[i - 1].name, note->name) == 0)
			continue;
		char *name = xasprintf("usdt:%s:%s:%s", path, note->provider, note->name);
		if (wildcard_match(pattern, name)) {
			fprintf(out, "%s\n", name);
			if (verbose && note->arguments[0])
				fprintf(out, "    %s\n", note->arguments);
		}
		free(name);
	}
	stapsdt_note_list_free(&notes);
	elf_object_close(object);
	return 0;
}

/* "usdt:/x" and "usdt:/x:name" mean every provider; "usdt:/x:p:n" as written.
 * `rest` is what follows the binary (NULL or ":..."). */
static char *full_list_pattern(const char *path, const char *rest)
{
	if (!rest || !rest[1])
		return xasprintf("usdt:%s:*:*", path);
	if (!strchr(rest + 1, ':'))
		return xasprintf("usdt:%s:*:%s", path, rest + 1);
	return xasprintf("usdt:%s:%s", path, rest + 1);
}

/*
 * -l 'usdt:BINARY[:PROVIDER[:NAME]]', and with -p PID also a BINARY with
 * wildcards ('usdt:*' lists the probes of every object the process maps,
 * objects built in memory included) or 'usdt:PROVIDER:NAME'.
 */
static int list_usdt(const char *pattern, pid_t pid, bool verbose, FILE *out, char **error)
{
	const char *rest, *colon;
	char *binary, *path = NULL, *full_pattern;
	int err;

	if (!pattern || strncmp(pattern, "usdt:", 5) != 0)
		return 0;
	rest = pattern + 5;
	colon = strchr(rest, ':');
	binary = colon ? xstrndup(rest, (size_t)(colon - rest)) : xstrdup(rest);
	if (pid && (has_wildcard(binary) || elf_resolve_binary(binary, pid, &path) < 0)) {
		/* every object of the process: BINARY is a wildcard over their
		 * paths, or (usdt:PROVIDER:NAME) a provider */
		bool provider_given = !has_wildcard(binary);
		path_list objects = { 0 };
		if (elf_process_objects(pid, &objects) < 0) {
			*error = xasprintf("cannot read the objects mapped into process %d", (int)pid);
			free(binary);
			return -ENOENT;
		}
		for (int i = 0; i < objects.count; i++) {
			const char *object = objects.items[i];
			char *ignored = NULL;
			if (provider_given)
				full_pattern = xasprintf("usdt:%s:%s%s", object, binary,
							 colon ? colon : ":*");
			else if (!wildcard_match(binary, object))
				continue;
			else
				full_pattern = full_list_pattern(object, colon);
			/* objects without USDT notes simply list nothing */
			list_object(object, full_pattern, verbose, out, &ignored);
			free(ignored);
			free(full_pattern);
		}
		path_list_free(&objects);
		free(binary);
		return 0;
	}
	err = path ? 0 : elf_resolve_binary(binary, 0, &path);
	if (err < 0 && has_wildcard(binary)) {
		*error = xasprintf("listing usdt probes of '%s' needs -p PID (the objects of one "
				   "process)", binary);
	} else if (err < 0) {
		*error = xasprintf("usdt target file '%s' does not exist or is not readable", binary);
	} else {
		full_pattern = full_list_pattern(path, colon);
		err = list_object(path, full_pattern, verbose, out, error);
		free(full_pattern);
	}
	free(binary);
	free(path);
	return err;
}

static int usdt_list(const char *pattern, bool verbose, FILE *out, char **error)
{
	return list_usdt(pattern, 0, verbose, out, error);
}

static int usdt_list_process(const char *pattern, pid_t pid, bool verbose, FILE *out,
			     char **error)
{
	return list_usdt(pattern, pid, verbose, out, error);
}

const struct provider usdt_provider = {
	.name = "usdt",
	.user_space = true,
	.runs_last_attached_first = true,
	.aliases = { "U", NULL },
	.prog_type = BPF_PROG_TYPE_KPROBE,
	.expand = usdt_expand,
	.describe = usdt_describe,
	.attach = usdt_attach,
	.list = usdt_list,
	.list_process = usdt_list_process,
};
