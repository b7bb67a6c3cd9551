/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The provider table and the helpers providers share: splitting a probe as
 * written into its ':'-separated parts, making a probe point, parsing the
 * counts and time units of interval/profile/software specs, and attaching a
 * program to perf events on one or every CPU.
 *
 * Splitting knows nothing about providers: "BEGIN" has no parts,
 * "tracepoint:sched:sched_switch" has two, "uprobe:/bin/bash:readline" has
 * two. Each provider's expand() decides whether the count is right.
 */
#include "provider.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernel/attach.h"
#include "../kernel/features.h"

extern const struct provider begin_provider;
extern const struct provider end_provider;
extern const struct provider tracepoint_provider;
extern const struct provider interval_provider;
extern const struct provider profile_provider;
extern const struct provider software_provider;
extern const struct provider uprobe_provider;
extern const struct provider uretprobe_provider;
extern const struct provider usdt_provider;
extern const struct provider rawtracepoint_provider;
extern const struct provider hardware_provider;
extern const struct provider kprobe_provider;
extern const struct provider kretprobe_provider;
extern const struct provider fentry_provider;
extern const struct provider fexit_provider;

/* -l prints providers in this order. */
const struct provider *const provider_table[] = {
	&begin_provider,
	&end_provider,
	&tracepoint_provider,
	&rawtracepoint_provider,
	&kprobe_provider,
	&kretprobe_provider,
	&fentry_provider,
	&fexit_provider,
	&software_provider,
	&hardware_provider,
	&interval_provider,
	&profile_provider,
	&uprobe_provider,
	&uretprobe_provider,
	&usdt_provider,
	NULL,
};

const struct provider *provider_lookup(const char *name)
{
	for (const struct provider *const *p = provider_table; *p; p++) {
		if (strcmp((*p)->name, name) == 0)
			return *p;
		for (const char *const *alias = (*p)->aliases; *alias; alias++) {
			if (strcmp(*alias, name) == 0)
				return *p;
		}
	}
	return NULL;
}

/* Probe types of bpftrace that sonde does not offer, with the reason, so
 * that a script using one is told so rather than that it misspelt a type. */
static const struct {
	const char *names[3];
	const char *reason;
} unsupported_types[] = {
	{ { "watchpoint", "w", NULL }, "watchpoint probes are not supported by sonde: they need hardware "
	  "breakpoint perf events on the traced process's memory, and sonde has no provider for them" },
	{ { "asyncwatchpoint", "aw", NULL }, "asyncwatchpoint probes are not supported by sonde: they need "
	  "hardware breakpoint perf events on the traced process's memory, and sonde has no provider "
	  "for them" },
	{ { "iter", "it", NULL }, "iter probes are not supported by sonde: it has no provider for BPF "
	  "iterators (BPF_TRACE_ITER programs)" },
};

const char *provider_unsupported_reason(const char *name)
{
	for (size_t i = 0; i < sizeof(unsupported_types) / sizeof(unsupported_types[0]); i++)
		for (int k = 0; k < 3 && unsupported_types[i].names[k]; k++)
			if (strcmp(unsupported_types[i].names[k], name) == 0)
				return unsupported_types[i].reason;
	return NULL;
}

/* The next ':' outside double quotes, or NULL. */
static const char *spec_next_colon(const char *text)
{
	bool quoted = false;
	for (; *text; text++) {
		if (*text == '"')
			quoted = !quoted;
		else if (*text == ':' && !quoted)
			return text;
	}
	return NULL;
}

/* A part of a spec without the double quotes that may wrap all or some of
 * it (`uprobe:"/opt/my app/bin":main`, as bpftrace reads it): what a
 * tool's string option becomes when its macro stands in a probe. */
static char *spec_part(const char *from, size_t length)
{
	char *part = xmalloc(length + 1);
	size_t used = 0;
	for (size_t i = 0; i < length; i++)
		if (from[i] != '"')
			part[used++] = from[i];
	part[used] = '\0';
	return part;
}

struct probe_spec *probe_spec_parse(const char *text, struct src_loc loc)
{
	struct probe_spec *spec = xcalloc(1, sizeof(*spec));
	const int max_parts = (int)(sizeof(spec->parts) / sizeof(spec->parts[0]));
	const char *colon = spec_next_colon(text);

	spec->text = xstrdup(text);
	spec->loc = loc;
	if (!colon) {
		spec->provider_name = xstrdup(text);
		return spec;
	}
	spec->provider_name = xstrndup(text, (size_t)(colon - text));
	for (const char *part = colon + 1;; part = colon + 1) {
		/* The last slot takes the rest, colons included, so a spec with
		 * too many parts still shows up as one with the maximum count. */
		colon = spec->part_count == max_parts - 1 ? NULL : spec_next_colon(part);
		if (!colon) {
			spec->parts[spec->part_count++] = spec_part(part, strlen(part));
			break;
		}
		spec->parts[spec->part_count++] = spec_part(part, (size_t)(colon - part));
	}
	return spec;
}

void probe_spec_free(struct probe_spec *spec)
{
	if (!spec)
		return;
	for (int i = 0; i < spec->part_count; i++)
		free(spec->parts[i]);
	free(spec->provider_name);
	free(spec->text);
	free(spec);
}

/* Types (args_type) are released with type_free_all, not here. */
void probe_point_free(struct probe_point *point)
{
	if (!point)
		return;
	free(point->name);
	free(point->target);
	free(point->function);
	free(point->arg_locations);
	free(point->binary_path);
	free(point->note);
	free(point->unavailable);
	for (int i = 0; i < point->function_count; i++)
		free(point->functions[i]);
	free(point->functions);
	if (point->group && --point->group->refs == 0)
		point->group->free(point->group);
	free(point);
}

const struct probe_point *probe_points_first_unavailable(const probe_point_list *points)
{
	for (int i = 0; i < points->count; i++) {
		if (points->items[i]->unavailable)
			return points->items[i];
	}
	return NULL;
}

int probe_points_unavailable(int (*expand_points)(const struct probe_spec *, bool,
						  probe_point_list *, char **),
			     const struct probe_spec *spec, bool is_return, probe_point_list *out,
			     char **error)
{
	int before = out->count;
	char *points_error = NULL;

	if (expand_points(spec, is_return, out, &points_error) < 0 || out->count == before) {
		free(points_error);
		for (int i = before; i < out->count; i++)
			probe_point_free(out->items[i]);
		out->count = before;
		return -EOPNOTSUPP;
	}
	free(points_error);
	for (int i = before; i < out->count; i++)
		out->items[i]->unavailable = xstrdup(*error);
	free(*error);
	*error = NULL;
	return 0;
}

static void cookie_group_free(struct probe_group *group)
{
	free(group);
}

void probe_points_group_by_cookie(probe_point_list *points)
{
	struct probe_group *group;
	const struct provider *checked = NULL;
	int count = 0;

	for (int i = 0; i < points->count; i++) {
		const struct probe_point *point = points->items[i];

		if (point->provider->attaches_cookie && !point->group)
			count++;
	}
	if (count < 2 || !feature_has_perf_link())
		return;
	/* the helper is probed (with a program load) once per provider */
	for (int i = 0; i < points->count; i++) {
		const struct probe_point *point = points->items[i];

		if (!point->provider->attaches_cookie || point->group || point->provider == checked)
			continue;
		if (!feature_has_helper(point->provider->prog_type, BPF_FUNC_get_attach_cookie))
			return;
		checked = point->provider;
	}
	group = xcalloc(1, sizeof(*group));
	group->free = cookie_group_free;
	group->index.kind = ARG_LOCATION_ATTACH_COOKIE;
	group->index.size = 8;
	group->index_limit = count;
	count = 0;
	for (int i = 0; i < points->count; i++) {
		struct probe_point *point = points->items[i];

		if (!point->provider->attaches_cookie || point->group)
			continue;
		point->group = group;
		point->group_slot = count++;
		group->refs++;
	}
}

struct probe_point *probe_point_new(const struct provider *provider, const char *name)
{
	struct probe_point *point = xcalloc(1, sizeof(*point));

	point->provider = provider;
	point->name = xstrdup(name);
	point->args_access = ARGS_NONE;
	return point;
}

bool probe_parse_count(const char *text, uint64_t *value)
{
	uint64_t result = 0;
	const char *p = text;
	bool any_digit = false;

	for (; (*p >= '0' && *p <= '9') || (*p == '_' && any_digit); p++) {
		if (*p == '_')
			continue;
		if (result > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return false;
		result = result * 10 + (uint64_t)(*p - '0');
		any_digit = true;
	}
	if (!any_digit)
		return false;
	if (*p == 'e' || *p == 'E') {
		const char *exponent_text = ++p;
		int exponent = 0;
		for (; *p >= '0' && *p <= '9'; p++) {
			exponent = exponent * 10 + (*p - '0');
			if (exponent > 19)
				return false;
		}
		if (p == exponent_text)
			return false;
		for (; exponent > 0; exponent--) {
			if (result > UINT64_MAX / 10)
				return false;
			result *= 10;
		}
	}
	if (*p != '\0')
		return false;
	*value = result;
	return true;
}

/* Nanoseconds per count of each time unit; hz counts events per second. */
static const struct {
	const char *unit;
	uint64_t ns;
} timer_units[] = {
	{ "s", 1000000000 },
	{ "ms", 1000000 },
	{ "us", 1000 },
	{ "hz", 0 },
};

int probe_expand_timer(const struct provider *provider, const struct probe_spec *spec,
		       bool every_cpu, probe_point_list *out, char **error)
{
	const char *kind = provider->name;
	struct probe_point *point;
	uint64_t count, unit_ns = 0;
	bool unit_found = false;

	if (spec->part_count != 2) {
		*error = xasprintf("%s probes are written %s:UNIT:COUNT with UNIT one of s, ms, "
				   "us or hz (e.g. %s:s:1, %s:hz:99)",
				   kind, kind, kind, kind);
		return -EINVAL;
	}
	const char *unit = spec->parts[0], *count_text = spec->parts[1];
	for (size_t i = 0; i < sizeof(timer_units) / sizeof(timer_units[0]); i++) {
		if (strcmp(unit, timer_units[i].unit) == 0) {
			unit_ns = timer_units[i].ns;
			unit_found = true;
		}
	}
	if (!unit_found) {
		*error = xasprintf("'%s' is not a unit %s probes accept; use s, ms, us or hz", unit,
				   kind);
		return -EINVAL;
	}
	if (count_text[0] == '\0') {
		*error = xasprintf("%s:%s needs a count: %s:%s:N", kind, unit, kind, unit);
		return -EINVAL;
	}
	if (!probe_parse_count(count_text, &count)) {
		*error = xasprintf("'%s' in %s:%s:%s is not a whole number", count_text, kind, unit,
				   count_text);
		return -EINVAL;
	}
	if (count == 0) {
		*error = xasprintf("the count in %s:%s:%s must be greater than zero", kind, unit,
				   count_text);
		return -EINVAL;
	}
	if (unit_ns && count > UINT64_MAX / unit_ns) {
		*error = xasprintf("%s:%s:%s is too long a period", kind, unit, count_text);
		return -EINVAL;
	}

	char *name = xasprintf("%s:%s:%s", kind, unit, count_text);
	point = probe_point_new(provider, name);
	free(name);
	point->target = xstrdup(unit);
	point->every_cpu = every_cpu;
	if (unit_ns)
		point->period = count * unit_ns;
	else
		point->frequency = count;
	vec_push(out, point);
	return 0;
}

/* The kernel's cap on sampling frequency, or 0 if it cannot be read. */
static uint64_t max_sample_rate(void)
{
	char *text = read_file("/proc/sys/kernel/perf_event_max_sample_rate", NULL);
	uint64_t rate = text ? strtoull(text, NULL, 10) : 0;

	free(text);
	return rate;
}

static char *perf_attach_error(const struct probe_point *point, int cpu, bool every_cpu,
			       const char *step, int err)
{
	uint64_t max_rate;
	char *where = every_cpu ? xasprintf(" on cpu %d", cpu) : xstrdup("");
	char *message;

	if (err == -EINVAL && point->frequency && (max_rate = max_sample_rate()) &&
	    point->frequency > max_rate)
		message = xasprintf("cannot attach %s: %" PRIu64 " Hz is above the kernel's limit "
				    "of %" PRIu64 " (sysctl kernel.perf_event_max_sample_rate)",
				    point->name, point->frequency, max_rate);
	else
		message = xasprintf("cannot attach %s%s: %s failed: %s", point->name, where, step,
				    strerror(-err));
	free(where);
	return message;
}

int probe_attach_perf_event(const struct probe_point *point, struct perf_event_attr *attr,
			    int prog_fd, fd_list *fds, char **error)
{
	int *cpus = NULL;
	int cpu_count;
	int first = fds->count;
	int err = 0;

	/* Single events go on the first online CPU: CPU 0 unless it is offline. */
	cpu_count = online_cpus(&cpus);
	if (cpu_count < 0) {
		*error = xasprintf("cannot attach %s: reading the online CPUs failed: %s",
				   point->name, strerror(-cpu_count));
		return cpu_count;
	}
	if (!point->every_cpu)
		cpu_count = 1;
	for (int i = 0; i < cpu_count; i++) {
		const char *step = "";
		int pair[2];

		err = perf_event_attach(attr, cpus[i], prog_fd, probe_point_cookie(point), pair,
					&step);
		if (err) {
			*error = perf_attach_error(point, cpus[i], point->every_cpu, step, err);
			break;
		}
		vec_push(fds, pair[0]);
		if (pair[1] >= 0)
			vec_push(fds, pair[1]);
	}
	free(cpus);
	if (err) {
		for (int i = first; i < fds->count; i++)
			close(fds->items[i]);
		fds->count = first;
	}
	return err;
}

int probe_attach_cpu_clock(const struct probe_point *point, int prog_fd, fd_list *fds, char **error)
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

int probe_describe_no_args(struct probe_point *point, char **error)
{
	point->args_access = ARGS_NONE;
	point->features = 0;
	return 0;
}

int probe_list_nothing(const char *pattern, bool verbose, FILE *out, char **error)
{
	return 0;
}

int perf_event_name_find(const struct perf_event_name *table, int count, const char *name)
{
	for (int i = 0; i < count; i++) {
		if (strcmp(table[i].name, name) == 0 || (table[i].alias && strcmp(table[i].alias, name) == 0))
			return i;
	}
	return -1;
}

char *perf_event_name_list(const struct perf_event_name *table, int count)
{
	struct strbuf sb;

	strbuf_init(&sb);
	for (int i = 0; i < count; i++) {
		if (i)
			strbuf_puts(&sb, i == count - 1 ? " and " : ", ");
		strbuf_puts(&sb, table[i].name);
		if (table[i].alias)
			strbuf_printf(&sb, " (%s)", table[i].alias);
	}
	return strbuf_release(&sb);
}

void perf_event_name_print(const struct perf_event_name *table, int count, const char *provider,
			   const char *alias, const char *pattern, FILE *out)
{
	size_t alias_length = strlen(alias);
	char *full = !pattern ? xstrdup("*")
		     : strncmp(pattern, alias, alias_length) == 0 && pattern[alias_length] == ':'
			     ? xasprintf("%s%s", provider, pattern + alias_length)
			     : xstrdup(pattern);

	for (int i = 0; i < count; i++) {
		char *name = xasprintf("%s:%s:", provider, table[i].name);
		bool match = wildcard_match(full, name);
		name[strlen(name) - 1] = '\0';
		match = match || wildcard_match(full, name);
		if (match)
			fprintf(out, "%s:\n", name);
		free(name);
	}
	free(full);
}

void perf_event_name_point(const struct provider *provider, const struct perf_event_name *table,
			   int index, const char *written_name, const char *count_text,
			   uint64_t count, probe_point_list *out)
{
	char *name = count_text ? xasprintf("%s:%s:%s", provider->name, written_name, count_text)
				: xasprintf("%s:%s", provider->name, written_name);
	struct probe_point *point = probe_point_new(provider, name);

	free(name);
	point->target = xstrdup(table[index].name);
	point->period = count ? count : table[index].default_count;
	point->every_cpu = true;
	point->args_access = ARGS_NONE;
	vec_push(out, point);
}

int perf_event_family_expand(const struct perf_event_family *family, const struct probe_spec *spec,
			     probe_point_list *out, char **error)
{
	const char *kind = family->provider->name;
	const char *event, *count_text = NULL;
	uint64_t count = 0;
	int index;

	if (spec->part_count < 1 || spec->part_count > 2 || !spec->parts[0][0]) {
		*error = xasprintf("%s probes are written %s:EVENT or %s:EVENT:COUNT (e.g. %s)", kind,
				   kind, kind, family->example);
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
		for (int i = 0; i < family->event_count; i++)
			if (wildcard_match(event, family->events[i].name))
				perf_event_name_point(family->provider, family->events, i,
						      family->events[i].name, count_text, count, out);
		if (out->count > before)
			return 0;
		char *valid = perf_event_name_list(family->events, family->event_count);
		*error = xasprintf("no %s event matches '%s'; valid events are %s", kind, event, valid);
		free(valid);
		return -ENOENT;
	}
	index = perf_event_name_find(family->events, family->event_count, event);
	if (index < 0) {
		char *valid = perf_event_name_list(family->events, family->event_count);
		*error = xasprintf("'%s' is not a %s event; valid events are %s", event, kind, valid);
		free(valid);
		return -EINVAL;
	}
	perf_event_name_point(family->provider, family->events, index, event, count_text, count, out);
	return 0;
}

int perf_event_family_attach(const struct perf_event_family *family,
			     const struct probe_point *point, int prog_fd, fd_list *fds,
			     char **error)
{
	struct perf_event_attr attr = { .type = family->perf_type };
	int index = perf_event_name_find(family->events, family->event_count, point->target);

	if (index < 0) {
		*error = xasprintf("cannot attach %s: unknown %s event", point->name,
				   family->provider->name);
		return -EINVAL;
	}
	attr.config = family->events[index].config;
	attr.sample_period = point->period;
	return probe_attach_perf_event(point, &attr, prog_fd, fds, error);
}
