/* SPDX-License-Identifier: Apache-2.0 */
/*
 * interval:UNIT:COUNT — a timer that fires on one CPU at a time, every COUNT
 * seconds/milliseconds/microseconds, or COUNT times a second (hz).
 *
 * It is a cpu-clock software perf event opened on CPU 0 for every task:
 * cpu-clock is driven by an hrtimer, so it ticks whether or not CPU 0 is
 * busy, and being on one CPU is what makes it an interval rather than a
 * per-CPU sampler (that is profile). The program is BPF_PROG_TYPE_PERF_EVENT.
 */
#include "provider.h"

#include <linux/bpf.h>
#include <linux/perf_event.h>

extern const struct provider interval_provider;

static int interval_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	return probe_expand_timer(&interval_provider, spec, false, out, error);
}

const struct provider interval_provider = {
	.no_task_context = true,
	.name = "interval",
	.aliases = { "i", NULL },
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.expand = interval_expand,
	.describe = probe_describe_no_args,
	.attach = probe_attach_cpu_clock,
	.list = probe_list_nothing, /* timers cannot be enumerated */
};
