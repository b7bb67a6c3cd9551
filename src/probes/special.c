/* SPDX-License-Identifier: Apache-2.0 */
/*
 * BEGIN and END: not kernel events but moments in sonde's own run. Their
 * programs are loaded like any other (as BPF_PROG_TYPE_RAW_TRACEPOINT, the
 * cheapest type BPF_PROG_TEST_RUN can execute) and run exactly once by the
 * runtime: BEGIN before the other probes are attached, END after they are
 * detached. So they expand to one point each and are never attached.
 */
#include "provider.h"

#include <errno.h>
#include <linux/bpf.h>
#include <string.h>

extern const struct provider begin_provider;
extern const struct provider end_provider;

static int special_expand(const struct provider *provider, const struct probe_spec *spec,
			  probe_point_list *out, char **error)
{
	struct probe_point *point;

	if (spec->part_count != 0) {
		*error = xasprintf("%s probes take no arguments: write just %s", provider->name,
				   provider->name);
		return -EINVAL;
	}
	point = probe_point_new(provider, provider->name);
	point->args_access = ARGS_NONE;
	vec_push(out, point);
	return 0;
}

static int begin_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	return special_expand(&begin_provider, spec, out, error);
}

static int end_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	return special_expand(&end_provider, spec, out, error);
}

static int special_describe(struct probe_point *point, char **error)
{
	point->args_access = ARGS_NONE;
	point->features = 0;
	return 0;
}

static int special_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
			  char **error)
{
	*error = xasprintf("%s probes are run by sonde itself and cannot be attached", point->name);
	return -EINVAL;
}

/* Not kernel probes: -l does not show them (nor does bpftrace). */
static int special_list(const char *pattern, bool verbose, FILE *out, char **error)
{
	return 0;
}

const struct provider begin_provider = {
	.no_task_context = true,
	.name = "BEGIN",
	.aliases = { "begin", NULL },
	.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT,
	.expand = begin_expand,
	.describe = special_describe,
	.attach = special_attach,
	.list = special_list,
};

const struct provider end_provider = {
	.no_task_context = true,
	.name = "END",
	.aliases = { "end", NULL },
	.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT,
	.expand = end_expand,
	.describe = special_describe,
	.attach = special_attach,
	.list = special_list,
};
