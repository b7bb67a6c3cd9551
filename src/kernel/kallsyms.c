/* SPDX-License-Identifier: Apache-2.0 */
/* Reading /proc/kallsyms; see kallsyms.h. */
#include "kallsyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

bool kallsyms_parse_line(const char *line, struct kallsyms_line *out)
{
	char *cursor;

	out->address = strtoull(line, &cursor, 16);
	if (cursor == line || cursor[0] != ' ' || !cursor[1] || cursor[2] != ' ')
		return false;
	out->type = cursor[1];
	out->name = cursor + 3;
	out->name_length = strcspn(out->name, " \t\n");
	out->module = NULL;
	out->module_length = 0;
	if (out->name[out->name_length] == '\t' && out->name[out->name_length + 1] == '[') {
		out->module = out->name + out->name_length + 2;
		out->module_length = strcspn(out->module, "]\n");
	}
	return out->name_length > 0;
}

int kallsyms_each(const char *path, void (*visit)(const struct kallsyms_line *line, void *context),
		  void *context)
{
	FILE *file = fopen(path ? path : "/proc/kallsyms", "re");
	char *line = NULL;
	size_t capacity = 0;

	if (!file)
		return -errno;
	while (getline(&line, &capacity, file) > 0) {
		struct kallsyms_line parsed;
		if (kallsyms_parse_line(line, &parsed))
			visit(&parsed, context);
	}
	free(line);
	fclose(file);
	return 0;
}

/* The names of /proc/kallsyms, read once on the first lookup and sorted:
 * a program may ask kaddr() or a kprobe check for thousands of names, and
 * each read of the file costs tens of milliseconds of kernel time. */
struct kallsyms_name {
	size_t name;                /* offset in kallsyms_table.names */
	unsigned long long address; /* 0: kptr_restrict hides it from us */
	int line;                   /* equal names: the first listed wins */
};

static struct {
	bool loaded;
	int err;                    /* opening the file failed: -errno */
	struct strbuf names;
	VEC(struct kallsyms_name) symbols;
} kallsyms_table;

static int kallsyms_compare(const void *a, const void *b)
{
	const struct kallsyms_name *x = a, *y = b;
	int order = strcmp(kallsyms_table.names.data + x->name, kallsyms_table.names.data + y->name);
	return order ? order : x->line - y->line;
}

static void kallsyms_keep_name(const struct kallsyms_line *parsed, void *context)
{
	struct kallsyms_name entry = {
		.name = kallsyms_table.names.length,
		.address = parsed->address,
		.line = kallsyms_table.symbols.count,
	};
	strbuf_append(&kallsyms_table.names, parsed->name, parsed->name_length);
	strbuf_putc(&kallsyms_table.names, '\0');
	vec_push(&kallsyms_table.symbols, entry);
}

static void kallsyms_load(void)
{
	kallsyms_table.loaded = true;
	strbuf_init(&kallsyms_table.names);
	kallsyms_table.err = kallsyms_each(NULL, kallsyms_keep_name, NULL);
	qsort(kallsyms_table.symbols.items, kallsyms_table.symbols.count,
	      sizeof(struct kallsyms_name), kallsyms_compare);
}

int kallsyms_lookup(const char *symbol, unsigned long long *address)
{
	if (!kallsyms_table.loaded)
		kallsyms_load();
	if (kallsyms_table.err)
		return kallsyms_table.err;
	/* the first entry not ordered before (symbol, line 0) */
	int low = 0, high = kallsyms_table.symbols.count;
	while (low < high) {
		int middle = low + (high - low) / 2;
		const char *name = kallsyms_table.names.data + kallsyms_table.symbols.items[middle].name;
		if (strcmp(name, symbol) < 0)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == kallsyms_table.symbols.count ||
	    strcmp(kallsyms_table.names.data + kallsyms_table.symbols.items[low].name, symbol) != 0)
		return -ENOENT;
	unsigned long long value = kallsyms_table.symbols.items[low].address;
	if (!value)
		return -EACCES;
	*address = value;
	return 0;
}
