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

#define SOFTWARE_EVENT_COUNT (int)(sizeof(software_events) / sizeof(software_events[0]))

static int software_event_index(const char *name)
{
	return perf_event_name_find(software_events, SOFTWARE_EVENT_COUNT, name);
}

static char *valid_events(void)
{
	return perf_event_name_list(software_events, SOFTWARE_EVENT_COUNT);
}

static void add_point(int index, const char *written_name, const char *count_text,
		      uint64_t count, probe_point_list *out)
{
	perf_event_name_point(&software_provider, software_events, index, written_name, count_text, count, out);
}

static int software_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	const char *event, *count_text = NULL;
	uint64_t count = 0;
	int index;

	if (spec->part_count < 1 || spec->part_count > 2 || !spec->parts[0][0]) {
		*error = xasprintf("software probes are written software:EVENT or "
				   "software:EVENT:COUNT (e.g. software:faults:100)");
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
		int before = out->count;
		for (int i = 0; i < SOFTWARE_EVENT_COUNT; i++) {
			if (wildcard_match(event, software_events[i].name))
				add_point(i, software_events[i].name, count_text, count, out);
		}
		if (out->count == before) {
			char *valid = valid_events();
			*error = xasprintf("no software event matches '%s'; valid events are %s",
					   event, valid);
			free(valid);
			return -ENOENT;
		}
		return 0;
	}
	index = software_event_index(event);
	if (index < 0) {
		char *valid = valid_events();
		*error = xasprintf("'%s' is not a software event; valid events are %s", event, valid);
		free(valid);
		return -EINVAL;
	}
	add_point(index, event, count_text, count, out);
	return 0;
}

static int software_describe(struct probe_point *point, char **error)
{
	point->args_access = ARGS_NONE;
	point->features = 0;
	return 0;
}

static int software_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
			   char **error)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE };
	int index = software_event_index(point->target);

	if (index < 0) {
		*error = xasprintf("cannot attach %s: unknown software event", point->name);
		return -EINVAL;
	}
	attr.config = software_events[index].config;
	attr.sample_period = point->period;
	return probe_attach_perf_event(point, &attr, prog_fd, fds, error);
}

/* Lines look like bpftrace's: "software:cpu-clock:" (the empty count part
 * standing for the default). A pattern may use the alias "s:" and may leave
 * out the trailing colon. */
static int software_list(const char *pattern, bool verbose, FILE *out, char **error)
{
	perf_event_name_print(software_events, SOFTWARE_EVENT_COUNT, "software", "s", pattern, out);
	return 0;
}

const struct provider software_provider = {
	.name = "software",
	.aliases = { "s", NULL },
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.expand = software_expand,
	.describe = software_describe,
	.attach = software_attach,
	.list = software_list,
};
