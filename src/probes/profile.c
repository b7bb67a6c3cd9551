/* SPDX-License-Identifier: Apache-2.0 */
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

const struct provider profile_provider = {
	.name = "profile",
	.aliases = { "p", NULL },
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.expand = profile_expand,
	.describe = probe_describe_no_args,
	.attach = probe_attach_cpu_clock,
	.list = probe_list_nothing, /* timers cannot be enumerated */
};
