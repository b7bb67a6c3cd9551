/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rawtracepoint:NAME and rawtracepoint:MODULE:NAME — a kernel tracepoint
 * without the trace-event layer in between.
 *
 * The program (BPF_PROG_TYPE_RAW_TRACEPOINT) gets the tracepoint's own C
 * arguments as an array of u64 (struct bpf_raw_tracepoint_args), not the
 * formatted record a tracepoint program reads; so arg0..argN are slots of
 * that array, and with kernel BTF the btf_trace_NAME typedef (a pointer to
 * the probe function, whose first parameter is the `void *` data cookie)
 * names and types them for `args`.
 *
 * Names come from those BTF typedefs (vmlinux and modules), which also
 * covers the tracepoints that have no trace event (sched_update_nr_running_tp
 * and friends); without BTF, from tracefs's event names.
 *
 * Attaching is BPF_RAW_TRACEPOINT_OPEN by name; the returned fd holds the
 * attachment. The kernel finds module tracepoints by name too, so the module
 * part of a spec only narrows the search.
 */
#include "provider.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernel/btf.h"
#include "../kernel/tracefs.h"

extern const struct provider rawtracepoint_provider;

/* Every raw tracepoint, sorted by name, duplicates removed. */
static int all_tracepoints(btf_name_list *out, char **error)
{
	if (btf_available()) {
		btf_list_names(BTF_KIND_TYPEDEF, "btf_trace_", true, out);
	} else {
		tracepoint_list events = { 0 };
		int err = tracefs_find("*", "*", &events, error);
		if (err)
			return err;
		for (int i = 0; i < events.count; i++) {
			struct btf_name entry = { NULL, xstrdup(events.items[i].name) };
			vec_push(out, entry);
		}
		tracepoint_list_free(&events);
	}
	return 0;
}

static int compare_names(const void *a, const void *b)
{
	const struct btf_name *x = a, *y = b;
	return strcmp(x->name, y->name);
}

static void sort_unique(btf_name_list *list)
{
	int kept = 0;

	qsort(list->items, (size_t)list->count, sizeof(*list->items), compare_names);
	for (int i = 0; i < list->count; i++) {
		if (kept && strcmp(list->items[kept - 1].name, list->items[i].name) == 0) {
			free(list->items[i].module);
			free(list->items[i].name);
			continue;
		}
		list->items[kept++] = list->items[i];
	}
	list->count = kept;
}

/* A tracepoint's module as BTF knows it: vmlinux for the kernel proper. */
static const char *module_of(const struct btf_name *entry)
{
	return entry->module ? entry->module : "vmlinux";
}

static int rawtracepoint_expand(const struct probe_spec *spec, probe_point_list *out,
				char **error)
{
	const char *module_pattern = spec->part_count == 2 ? spec->parts[0] : NULL;
	const char *name_pattern = spec->part_count >= 1 ? spec->parts[spec->part_count - 1] : "";
	btf_name_list names = { 0 };
	int err, before = out->count;

	if (spec->part_count < 1 || spec->part_count > 2 || !name_pattern[0] ||
	    (module_pattern && !module_pattern[0])) {
		*error = xasprintf("raw tracepoints are written rawtracepoint:NAME or "
				   "rawtracepoint:MODULE:NAME (e.g. rawtracepoint:sched_switch)");
		return -EINVAL;
	}
	/* One name and no module: one lookup in vmlinux finds it (listing
	 * every raw tracepoint of every module is a few ms of start-up) */
	if (!module_pattern && !has_wildcard(name_pattern)) {
		char *typedef_name = xasprintf("btf_trace_%s", name_pattern);
		bool found = btf_vmlinux_has(BTF_KIND_TYPEDEF, typedef_name);
		free(typedef_name);
		if (found) {
			struct btf_name entry = { NULL, xstrdup(name_pattern) };
			vec_push(&names, entry);
		}
	}
	if (!names.count) {
		err = all_tracepoints(&names, error);
		if (err)
			return err;
		sort_unique(&names);
	}
	for (int i = 0; i < names.count; i++) {
		if (!wildcard_match(name_pattern, names.items[i].name))
			continue;
		if (module_pattern && !wildcard_match(module_pattern, module_of(&names.items[i])))
			continue;
		char *name = module_pattern ? xasprintf("rawtracepoint:%s:%s",
							module_of(&names.items[i]),
							names.items[i].name)
					    : xasprintf("rawtracepoint:%s", names.items[i].name);
		struct probe_point *point = probe_point_new(&rawtracepoint_provider, name);
		free(name);
		point->target = names.items[i].module ? xstrdup(names.items[i].module) : NULL;
		point->function = xstrdup(names.items[i].name);
		point->args_access = ARGS_U64_ARRAY;
		vec_push(out, point);
	}
	btf_name_list_free(&names);
	if (out->count == before) {
		bool wildcard = has_wildcard(name_pattern) ||
				(module_pattern && has_wildcard(module_pattern));
		*error = xasprintf("%s: %s", wildcard ? "no raw tracepoint matches"
						      : "raw tracepoint not found",
				   spec->text + strlen(spec->provider_name) + 1);
		return -ENOENT;
	}
	return 0;
}

static int rawtracepoint_describe(struct probe_point *point, char **error)
{
	struct type *record = NULL;
	char *qualified = point->target ? xasprintf("%s:%s", point->target, point->function)
					: xstrdup(point->function);

	point->args_access = ARGS_U64_ARRAY;
	point->features = PROBE_HAS_ARGN;
	if (btf_tracepoint_args(qualified, &record) == 0) {
		point->args_type = record;
		point->features |= PROBE_HAS_ARGS;
		point->arg_count = record->field_count;
	}
	free(qualified);
	return 0;
}

static int rawtracepoint_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
				char **error)
{
	int fd = bpf_raw_tracepoint_open(point->function, prog_fd);

	if (fd < 0) {
		int err = -errno;
		if (err == -ENOENT)
			*error = xasprintf("cannot attach %s: the kernel has no raw tracepoint "
					   "named %s", point->name, point->function);
		else if (err == -EINVAL)
			/* The kernel checks the highest context offset the
			 * program reads against the tracepoint's argument count. */
			*error = xasprintf("cannot attach %s: BPF_RAW_TRACEPOINT_OPEN failed: %s "
					   "(does the program read an argument past the %s "
					   "tracepoint's last one?)",
					   point->name, strerror(-err), point->function);
		else
			*error = xasprintf("cannot attach %s: BPF_RAW_TRACEPOINT_OPEN failed: %s",
					   point->name, strerror(-err));
		return err;
	}
	vec_push(fds, fd);
	return 0;
}

/* Accepts "rawtracepoint:PATTERN", "rt:PATTERN" and a bare "PATTERN". */
static const char *name_pattern_of(const char *pattern)
{
	static const char *const prefixes[] = { "rawtracepoint:", "rt:" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t length = strlen(prefixes[i]);
		if (strncmp(pattern, prefixes[i], length) == 0)
			return pattern + length;
	}
	return pattern;
}

static int rawtracepoint_list(const char *pattern, bool verbose, FILE *out, char **error)
{
	btf_name_list names = { 0 };
	const char *name_pattern = pattern ? name_pattern_of(pattern) : "*";
	int err = all_tracepoints(&names, error);

	if (err)
		return err;
	sort_unique(&names);
	for (int i = 0; i < names.count; i++) {
		const struct btf_name *entry = &names.items[i];
		char *qualified = xasprintf("%s:%s", module_of(entry), entry->name);
		bool match = wildcard_match(name_pattern, entry->name) ||
			     wildcard_match(name_pattern, qualified);
		if (match) {
			fprintf(out, "rawtracepoint:%s\n", entry->name);
			btf_decl_list decls = { 0 };
			if (verbose && btf_tracepoint_declarations(qualified, &decls) == 0) {
				for (int j = 0; j < decls.count; j++)
					fprintf(out, "    %s\n", decls.items[j]);
			}
			btf_decl_list_free(&decls);
		}
		free(qualified);
	}
	btf_name_list_free(&names);
	return 0;
}

const struct provider rawtracepoint_provider = {
	.name = "rawtracepoint",
	.aliases = { "rt", NULL },
	.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT,
	.expand = rawtracepoint_expand,
	.describe = rawtracepoint_describe,
	.attach = rawtracepoint_attach,
	.list = rawtracepoint_list,
};
