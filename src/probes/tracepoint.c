/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracepoint:CATEGORY:NAME — the kernel's static trace events.
 *
 * Both parts may hold wildcards; expansion matches them against tracefs's
 * list of events. A tracepoint program (BPF_PROG_TYPE_TRACEPOINT) receives
 * the raw trace record as its context, so `args` is a record whose layout
 * is the event's format file (see kernel/tracefs.c).
 *
 * Attaching: one perf event of PERF_TYPE_TRACEPOINT with pid -1 on one CPU is
 * enough for every CPU. The program hangs off the tracepoint itself (the
 * event's prog_array), and the kernel's perf hook runs it wherever the
 * tracepoint fires, whether or not that CPU has a perf event of its own.
 * The program is attached through a bpf_link on that perf event, so closing
 * the two fds (or exiting) detaches it.
 */
#include "provider.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "../kernel/btf.h"
#include "../kernel/tracefs.h"

extern const struct provider tracepoint_provider;

static int tracepoint_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	tracepoint_list found = { 0 };
	int err;

	if (spec->part_count != 2 || !spec->parts[0][0] || !spec->parts[1][0]) {
		*error = xasprintf("tracepoint probes are written tracepoint:CATEGORY:NAME "
				   "(e.g. tracepoint:syscalls:sys_enter_openat)");
		return -EINVAL;
	}
	err = tracefs_find(spec->parts[0], spec->parts[1], &found, error);
	if (err)
		return err;
	if (found.count == 0) {
		bool wildcard = has_wildcard(spec->parts[0]) || has_wildcard(spec->parts[1]);
		*error = xasprintf("%s: %s:%s", wildcard ? "tracepoints not found" : "tracepoint not found",
				   spec->parts[0], spec->parts[1]);
		tracepoint_list_free(&found);
		return -ENOENT;
	}
	int syscall_points[2] = { 0, 0 };   /* sys_enter_, sys_exit_ */
	struct probe_group *enter_group = NULL, *exit_group = NULL;
	for (int i = 0; i < found.count; i++) {
		if (strcmp(found.items[i].category, "syscalls") == 0)
			syscall_points[syscall_tracepoint_is_exit(found.items[i].name)]++;
	}
	bool dispatch[2];
	for (int is_exit = 0; is_exit < 2; is_exit++)
		dispatch[is_exit] = syscall_points[is_exit] > 0 &&
				    syscall_tracepoint_dispatch_wanted(is_exit, syscall_points[is_exit]);
	for (int i = 0; i < found.count; i++) {
		if (strcmp(found.items[i].category, "syscalls") == 0 &&
		    dispatch[syscall_tracepoint_is_exit(found.items[i].name)]) {
			/* many syscalls: through raw_syscalls (syscall_tracepoint.c) */
			struct probe_point *point = syscall_tracepoint_point(found.items[i].name,
									     &enter_group, &exit_group);
			if (point) {
				vec_push(out, point);
				continue;
			}
		}
		char *name = xasprintf("tracepoint:%s:%s", found.items[i].category, found.items[i].name);
		struct probe_point *point = probe_point_new(&tracepoint_provider, name);
		free(name);
		point->target = xstrdup(found.items[i].category);
		point->function = xstrdup(found.items[i].name);
		point->args_access = ARGS_CTX_RECORD;
		vec_push(out, point);
	}
	tracepoint_list_free(&found);
	return 0;
}

static int tracepoint_describe(struct probe_point *point, char **error)
{
	struct tracepoint_format format;
	int err;

	err = tracefs_read_format(point->target, point->function, &format, error);
	if (err) {
		/* no format file to read: the kernel's BTF knows the record too */
		struct type *record;
		if (btf_tracepoint_record(point->function, &record) < 0)
			return err;
		free(*error);
		*error = NULL;
		point->args_type = record;
		point->args_access = ARGS_CTX_RECORD;
		point->features = PROBE_HAS_ARGS;
		return 0;
	}
	point->args_type = format.record;
	point->args_access = ARGS_CTX_RECORD;
	point->features = PROBE_HAS_ARGS;
	tracepoint_format_free(&format);
	return 0;
}

static int tracepoint_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
			     char **error)
{
	struct tracepoint_format format;
	struct perf_event_attr attr = { 0 };
	int err = tracefs_read_format(point->target, point->function, &format, error);

	if (err)
		return err;
	tracepoint_format_free(&format);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)format.id;
	attr.sample_period = 1;
	attr.wakeup_events = 1;
	return probe_attach_perf_event(point, &attr, prog_fd, fds, error);
}

/* Accepts patterns spelled with the alias ("t:sched:*") as well. */
static char *canonical_pattern(const char *pattern)
{
	const char *colon = strchr(pattern, ':');

	if (colon) {
		size_t length = (size_t)(colon - pattern);
		for (const char *const *alias = tracepoint_provider.aliases; *alias; alias++) {
			if (strlen(*alias) == length && strncmp(pattern, *alias, length) == 0)
				return xasprintf("%s%s", tracepoint_provider.name, colon);
		}
	}
	return xstrdup(pattern);
}

static int tracepoint_list_probes(const char *pattern, bool verbose, FILE *out, char **error)
{
	tracepoint_list found = { 0 };
	char *format_error = NULL;
	char *full_pattern = pattern ? canonical_pattern(pattern) : xstrdup("*");
	int err = tracefs_find("*", "*", &found, error);

	if (err) {
		free(full_pattern);
		return err;
	}
	for (int i = 0; i < found.count; i++) {
		char *name = xasprintf("tracepoint:%s:%s", found.items[i].category, found.items[i].name);
		if (wildcard_match(full_pattern, name)) {
			fprintf(out, "%s\n", name);
			struct tracepoint_format format;
			if (verbose && tracefs_read_format(found.items[i].category, found.items[i].name,
							   &format, &format_error) == 0) {
				for (char **decl = format.decls; *decl; decl++)
					fprintf(out, "    %s\n", *decl);
				tracepoint_format_free(&format);
			}
			/* -lv of a tracepoint whose format cannot be read: its name alone */
			free(format_error);
			format_error = NULL;
		}
		free(name);
	}
	free(full_pattern);
	tracepoint_list_free(&found);
	return 0;
}

const struct provider tracepoint_provider = {
	.name = "tracepoint",
	.aliases = { "t", NULL },
	.prog_type = BPF_PROG_TYPE_TRACEPOINT,
	.expand = tracepoint_expand,
	.describe = tracepoint_describe,
	.attach = tracepoint_attach,
	.list = tracepoint_list_probes,
	.attaches_cookie = true,
};
