/* SPDX-License-Identifier: Apache-2.0 */
/*
 * software:EVENT[:COUNT] — the kernel's software perf events (perf_event_open(2)
 * PERF_TYPE_SOFTWARE): the program runs every COUNT occurrences of EVENT,
 * on whichever CPU the COUNT-th one happened. One perf event per online CPU,
 * since a software event only counts on the CPU it was opened for.
 *
 * The names, aliases and default counts are bpftrace's, so scripts written
 * for it keep their meaning: software:faults fires every 100 page faults.
 */
#include "provider.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

extern const struct provider software_provider;

static const struct perf_event_name software_events[] = {
	{ "alignment-faults", NULL, PERF_COUNT_SW_ALIGNMENT_FAULTS, 1 },
	{ "bpf-output", NULL, PERF_COUNT_SW_BPF_OUTPUT, 1 },
	{ "context-switches", "cs", PERF_COUNT_SW_CONTEXT_SWITCHES, 1000 },
	{ "cpu-clock", "cpu", PERF_COUNT_SW_CPU_CLOCK, 1000000 },
	{ "cpu-migrations", NULL, PERF_COUNT_SW_CPU_MIGRATIONS, 1 },
	{ "dummy", NULL, PERF_COUNT_SW_DUMMY, 1 },
	{ "emulation-faults", NULL, PERF_COUNT_SW_EMULATION_FAULTS, 1 },
	{ "major-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1 },
	{ "minor-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MIN, 100 },
	{ "page-faults", "faults", PERF_COUNT_SW_PAGE_FAULTS, 100 },
	{ "task-clock", NULL, PERF_COUNT_SW_TASK_CLOCK, 1000000 },
};

static const struct perf_event_family software_family = {
	.provider = &software_provider,
	.perf_type = PERF_TYPE_SOFTWARE,
	.events = software_events,
	.event_count = sizeof(software_events) / sizeof(software_events[0]),
	.example = "software:faults:100",
};

static int software_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	return perf_event_family_expand(&software_family, spec, out, error);
}

static int software_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
			   char **error)
{
	return perf_event_family_attach(&software_family, point, prog_fd, fds, error);
}

/* Lines look like bpftrace's: "software:cpu-clock:" (the empty count part
 * standing for the default). A pattern may use the alias "s:" and may leave
 * out the trailing colon. */
static int software_list(const char *pattern, bool verbose, FILE *out, char **error)
{
	perf_event_name_print(software_events, software_family.event_count, "software", "s", pattern,
			      out);
	return 0;
}

const struct provider software_provider = {
	.name = "software",
	.aliases = { "s", NULL },
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.expand = software_expand,
	.describe = probe_describe_no_args,
	.attach = software_attach,
	.list = software_list,
};
