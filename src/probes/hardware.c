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

#define HARDWARE_EVENT_COUNT (int)(sizeof(hardware_events) / sizeof(hardware_events[0]))

static int hardware_event_index(const char *name)
{
	return perf_event_name_find(hardware_events, HARDWARE_EVENT_COUNT, name);
}

static char *valid_events(void)
{
	return perf_event_name_list(hardware_events, HARDWARE_EVENT_COUNT);
}

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

static void add_point(int index, const char *written_name, const char *count_text,
		      uint64_t count, probe_point_list *out)
{
	perf_event_name_point(&hardware_provider, hardware_events, index, written_name, count_text, count, out);
}

static int hardware_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	const char *event, *count_text = NULL;
	uint64_t count = 0;
	int index, before = out->count;

	if (spec->part_count < 1 || spec->part_count > 2 || !spec->parts[0][0]) {
		*error = xasprintf("hardware probes are written hardware:EVENT or "
				   "hardware:EVENT:COUNT (e.g. hardware:cache-misses:1000000)");
		return -EINVAL;
	}
	event = spec->parts[0];
	if (spec->part_count == 2 && spec->parts[1][0]) {
		count_text = spec->parts[1];
		if (!probe_parse_count(count_text, &count)) {
			*error = xasprintf("'%s' in %s is not a whole number", count_text, spec->text);
			return -EINVAL;
		}
		if (count == 0) {
			*error = xasprintf("the count in %s must be greater than zero", spec->text);
			return -EINVAL;
		}
	}

	if (has_wildcard(event)) {
		for (int i = 0; i < HARDWARE_EVENT_COUNT; i++) {
			if (wildcard_match(event, hardware_events[i].name))
				add_point(i, hardware_events[i].name, count_text, count, out);
		}
		if (out->count == before) {
			char *valid = valid_events();
			*error = xasprintf("no hardware event matches '%s'; valid events are %s",
					   event, valid);
			free(valid);
			return -ENOENT;
		}
	} else {
		index = hardware_event_index(event);
		if (index < 0) {
			char *valid = valid_events();
			*error = xasprintf("'%s' is not a hardware event; valid events are %s", event,
					   valid);
			free(valid);
			return -EINVAL;
		}
		add_point(index, event, count_text, count, out);
	}

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

static int hardware_describe(struct probe_point *point, char **error)
{
	point->args_access = ARGS_NONE;
	point->features = 0;
	return 0;
}

static int hardware_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
			   char **error)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_HARDWARE };
	int index = hardware_event_index(point->target);
	int err;

	if (index < 0) {
		*error = xasprintf("cannot attach %s: unknown hardware event", point->name);
		return -EINVAL;
	}
	attr.config = hardware_events[index].config;
	attr.sample_period = point->period;
	err = probe_attach_perf_event(point, &attr, prog_fd, fds, error);
	if (err == -ENOENT || err == -EOPNOTSUPP) {
		/* This event, at least, is not counted by this CPU's PMU. */
		char *cause = *error;
		*error = xasprintf("hardware event %s is not supported on this machine (%s)",
				   hardware_events[index].name, cause);
		free(cause);
	}
	return err;
}

/* Lines look like bpftrace's: "hardware:cpu-cycles:". A pattern may use the
 * alias "h:" and may leave out the trailing colon. */
static int hardware_list(const char *pattern, bool verbose, FILE *out, char **error)
{
	perf_event_name_print(hardware_events, HARDWARE_EVENT_COUNT, "hardware", "h", pattern, out);
	return 0;
}

const struct provider hardware_provider = {
	.name = "hardware",
	.aliases = { "h", NULL },
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.expand = hardware_expand,
	.describe = hardware_describe,
	.attach = hardware_attach,
	.list = hardware_list,
};
