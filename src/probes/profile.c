/*
 * profile:UNIT:COUNT — sampling on every CPU, every COUNT s/ms/us or COUNT
 * times a second (hz).
 *
 * One cpu-clock perf event per online CPU, each running the program
 * (BPF_PROG_TYPE_PERF_EVENT) in the interrupted context of that CPU, which
 * is what makes kstack/ustack/comm in a profile probe describe the work the
 * CPU was doing. Same spec syntax as interval (shared in registry.c).
 */
#include "provider.h"

#include <linux/bpf.h>
#include <linux/perf_event.h>

extern const struct provider profile_provider;

static int profile_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	return probe_expand_timer(&profile_provider, spec, true, out, error);
}

static int profile_describe(struct probe_point *point, char **error)
{
	point->args_access = ARGS_NONE;
	point->features = 0;
	return 0;
}

static int profile_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
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
static int profile_list(const char *pattern, bool verbose, FILE *out)
{
	return 0;
}

const struct provider profile_provider = {
	.name = "profile",
	.aliases = { "p", NULL },
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.expand = profile_expand,
	.describe = profile_describe,
	.attach = profile_attach,
	.list = profile_list,
};
