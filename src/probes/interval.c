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

static int interval_describe(struct probe_point *point, char **error)
{
	point->args_access = ARGS_NONE;
	point->features = 0;
	return 0;
}

static int interval_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
			   char **error)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
	};

	if (point->frequency) {
		attr.freq = 1;
		attr.sample_freq = point->frequency;
	} else {
		attr.sample_period = point->period;
	}
	return probe_attach_perf_event(point, &attr, prog_fd, fds, error);
}

/* Timers are not enumerable: -l has nothing to show for them. */
static int interval_list(const char *pattern, bool verbose, FILE *out)
{
	return 0;
}

const struct provider interval_provider = {
	.name = "interval",
	.aliases = { "i", NULL },
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.expand = interval_expand,
	.describe = interval_describe,
	.attach = interval_attach,
	.list = interval_list,
};
