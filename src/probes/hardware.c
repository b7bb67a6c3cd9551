/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hardware:EVENT[:COUNT] — the CPU's performance counters (perf_event_open(2)
 * PERF_TYPE_HARDWARE): the program runs every COUNT occurrences of EVENT on
 * the CPU where the COUNT-th one happened, so there is one sampling perf
 * event per online CPU, and the program is BPF_PROG_TYPE_PERF_EVENT.
 *
 * Names, aliases and default counts are bpftrace's. Virtual machines usually
 * have no PMU; features.c finds that out once, and expansion reports it, so
 * the error points at the probe in the source rather than coming from attach.
 */
#include "provider.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernel/attach.h"
#include "../kernel/features.h"

extern const struct provider hardware_provider;

static const struct perf_event_name hardware_events[] = {
	{ "backend-stalls", NULL, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 1000000 },
	{ "branch-instructions", "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 100000 },
	{ "branch-misses", NULL, PERF_COUNT_HW_BRANCH_MISSES, 100000 },
	{ "bus-cycles", NULL, PERF_COUNT_HW_BUS_CYCLES, 100000 },
	{ "cache-misses", NULL, PERF_COUNT_HW_CACHE_MISSES, 1000000 },
	{ "cache-references", NULL, PERF_COUNT_HW_CACHE_REFERENCES, 1000000 },
	{ "cpu-cycles", "cycles", PERF_COUNT_HW_CPU_CYCLES, 1000000 },
	{ "frontend-stalls", NULL, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 1000000 },
	{ "instructions", NULL, PERF_COUNT_HW_INSTRUCTIONS, 1000000 },
	{ "ref-cycles", NULL, PERF_COUNT_HW_REF_CPU_CYCLES, 1000000 },
};

static const struct perf_event_family hardware_family = {
	.provider = &hardware_provider,
	.perf_type = PERF_TYPE_HARDWARE,
	.events = hardware_events,
	.event_count = sizeof(hardware_events) / sizeof(hardware_events[0]),
	.example = "hardware:cache-misses:1000000",
};

/* features.c says whether there is a PMU; the errno is asked again here
 * because the message quotes it. */
static char *unavailable_message(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
	};
	int fd = perf_event_open_fd(&attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return xasprintf("hardware events are not available on this machine (%s)",
				 feature_reason(FEATURE_HARDWARE));
	}
	return xasprintf("hardware events are not available on this machine (no PMU; "
			 "perf_event_open: %s)", strerror(-fd));
}

static int hardware_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	int before = out->count;
	int err = perf_event_family_expand(&hardware_family, spec, out, error);

	if (err)
		return err;
	/* Checked after the spelling, so a typo is reported as one even here. */
	if (!feature_available(FEATURE_HARDWARE)) {
		for (int i = before; i < out->count; i++)
			probe_point_free(out->items[i]);
		out->count = before;
		*error = unavailable_message();
		return -EOPNOTSUPP;
	}
	return 0;
}

static int hardware_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
			   char **error)
{
	int err = perf_event_family_attach(&hardware_family, point, prog_fd, fds, error);

	if (err == -ENOENT || err == -EOPNOTSUPP) {
		/* This event, at least, is not counted by this CPU's PMU. */
		char *cause = *error;
		*error = xasprintf("hardware event %s is not supported on this machine (%s)",
				   point->target, cause);
		free(cause);
	}
	return err;
}

/* Lines look like bpftrace's: "hardware:cpu-cycles:". A pattern may use the
 * alias "h:" and may leave out the trailing colon. */
static int hardware_list(const char *pattern, bool verbose, FILE *out, char **error)
{
	perf_event_name_print(hardware_events, hardware_family.event_count, "hardware", "h", pattern,
			      out);
	return 0;
}

const struct provider hardware_provider = {
	.name = "hardware",
	.aliases = { "h", NULL },
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.expand = hardware_expand,
	.describe = probe_describe_no_args,
	.attach = hardware_attach,
	.list = hardware_list,
};
