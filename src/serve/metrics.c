/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Maps as Prometheus metric families, in the conventions of Prometheus'
 * own exporters.
 *
 * A map @x becomes the family sonde_x (sonde_TOOL_x for a tool's maps):
 *   count(), sum()          counter    sonde_x_total
 *   integers, min, max, avg gauge      sonde_x
 *   stats()                 summary    sonde_x_count, sonde_x_sum (no quantiles)
 *                           + gauge    sonde_x_avg
 *   hist(), lhist()         histogram  sonde_x_bucket{le}, sonde_x_sum, sonde_x_count
 * Maps of strings, stacks, tuples and other non-numbers are left out (the
 * caller is told which), and so are a tool's plain integer maps: those are
 * its bookkeeping (start times by thread), not its results.
 *
 * Key parts become labels, named after the key expression when it is a
 * builtin (comm, pid, cpu, probe, func...), else key (one part) or key0,
 * key1...; --label @m=a,b names them. Label values are the text bpftrace
 * prints for the key, escaped; kernel strings are untrusted, so a byte that
 * is not valid UTF-8 or a control character is written as the text \xNN.
 *
 * Histogram buckets: values are integers, so the bucket [1024, 2048) has
 * the bound le="2047" and the counts are exact. A log2 histogram lists its
 * buckets from zero (le="-1" first when it saw negative values) up to its
 * highest non-empty one, then +Inf; an lhist lists all of its buckets. The
 * _sum is exact: serve compiles hist/lhist maps with a per-bucket sum of
 * the values (compile_options.hist_sums).
 *
 * After the maps come sonde's own counters of what was lost (losses.h):
 * sonde_lost_events_total, sonde_lost_map_updates_total,
 * sonde_lost_stacks_total and sonde_lost_probe_runs_total, the same for a
 * tool, so that one alert rule serves every target. A map whose family
 * would write one of their series is refused before serving.
 *
 * Which family a map becomes and how its samples are written is its
 * aggregation's record's to say (metric_type and put_metrics,
 * aggregations/); this file names families and labels, and holds the
 * writers the records choose from (metrics.h). Everything is read at render
 * time through the runtime's snapshots and the records' folds, the same
 * code that prints the maps at exit.
 */
#include "serve/serve.h"
#include "serve/metrics.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "aggregations/aggregation.h"
#include "common/utf8.h"
#include "runtime/losses.h"
#include "runtime/snapshot.h"

const struct metric_type metric_counter = { "counter", { "", "_total" } };
const struct metric_type metric_gauge = { "gauge", { "" } };
const struct metric_type metric_summary = { "summary", { "", "_count", "_sum", "_avg" } };
const struct metric_type metric_histogram = { "histogram", { "", "_bucket", "_count", "_sum" } };

struct family {
	const struct map_desc *map;
	const struct metric_type *type;
	/* its samples, from the record of the map's aggregation */
	void (*put_metrics)(struct metric_writer *out, const struct map_snapshot *snap);
	char *name;          /* sonde_x: the family name (a counter's samples add _total) */
	char *help;
	char **labels;       /* one per key part */
	int label_count;
};

struct metrics {
	const struct program *program;
	VEC(struct family) families;
};

/* sonde's own counters: a family each, one sample (name_total) */
static const struct {
	const char *name;
	const char *help;
	size_t offset;          /* of the count in struct losses */
} metrics_losses[] = {
	{ "sonde_lost_events", "Events the probes could not send to sonde: the ring buffer was full",
	  offsetof(struct losses, events) },
	{ "sonde_lost_map_updates", "Map updates refused because the map was full",
	  offsetof(struct losses, map_updates) },
	{ "sonde_lost_stacks", "Stacks the stack map could not take",
	  offsetof(struct losses, stacks) },
	{ "sonde_lost_probe_runs",
	  "Probe runs the kernel skipped while another BPF program was running on the same CPU",
	  offsetof(struct losses, probe_runs) },
};
#define METRICS_LOSSES (int)(sizeof(metrics_losses) / sizeof(metrics_losses[0]))

static bool metrics_valid_label(const char *name)
{
	if (!name || !*name || (name[0] >= '0' && name[0] <= '9'))
		return false;
	if (strncmp(name, "__", 2) == 0 || strcmp(name, "le") == 0 || strcmp(name, "quantile") == 0)
		return false;
	for (const char *p = name; *p; p++) {
		bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			  (*p >= '0' && *p <= '9') || *p == '_';
		if (!ok)
			return false;
	}
	return true;
}

/* ---- --label ---- */

int serve_add_label(struct serve_options *options, const char *text, char **error)
{
	const char *equals = strchr(text, '=');
	struct serve_label label = { 0 };

	if (text[0] != '@' || !equals || equals == text + 1 || !equals[1]) {
		*error = xasprintf("--label needs @MAP=NAME[,NAME...], not '%s'", text);
		return -EINVAL;
	}
	label.map = xstrndup(text, (size_t)(equals - text));
	char *names = xstrdup(equals + 1), *save = NULL;
	for (char *name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		label.names = xrealloc(label.names, (size_t)(label.count + 1) * sizeof(char *));
		label.names[label.count++] = xstrdup(name);
		if (!metrics_valid_label(name)) {
			*error = xasprintf("--label %s: '%s' is not a label name (letters, digits and _, "
					   "not starting with a digit or __, not le or quantile)",
					   text, name);
			free(names);
			vec_push(&options->labels, label);
			return -EINVAL;
		}
	}
	free(names);
	vec_push(&options->labels, label);
	if (label.count == 0) {
		*error = xasprintf("--label %s names no label", text);
		return -EINVAL;
	}
	return 0;
}

void serve_options_free(struct serve_options *options)
{
	for (int i = 0; i < options->labels.count; i++) {
		struct serve_label *label = &options->labels.items[i];
		for (int j = 0; j < label->count; j++)
			free(label->names[j]);
		free(label->names);
		free(label->map);
	}
	free(options->labels.items);
	memset(&options->labels, 0, sizeof(options->labels));
	web_config_free(options->web);
	options->web = NULL;
}

/* ---- families ---- */

static int metrics_key_parts(const struct map_desc *map)
{
	if (!map->key_type)
		return 0;
	return map->key_is_multi && map->key_type->kind == TYPE_TUPLE ? map->key_type->field_count : 1;
}

/* The family a map becomes: its aggregation's (NULL when that has none);
 * a plain integer is a gauge, except in a tool. */
static bool metrics_type_of(const struct map_desc *map, bool tool, struct family *family)
{
	const struct aggregation *aggregation = map->value_type->aggregation;

	if (aggregation) {
		family->type = aggregation->metric_type;
		family->put_metrics = aggregation->put_metrics;
	} else if (map->value_type->kind == TYPE_INT && !tool) {
		family->type = &metric_gauge;
		family->put_metrics = metrics_put_numbers;
	}
	return family->type && family->put_metrics;
}

/* sonde[_tool][_map], every character that cannot be in a metric name as _. */
static char *metrics_family_name(const char *tool, const char *map_name, bool counter)
{
	struct strbuf name;

	strbuf_init(&name);
	strbuf_puts(&name, "sonde");
	if (tool)
		strbuf_printf(&name, "_%s", tool);
	if (map_name[0] == '@' && map_name[1])
		strbuf_printf(&name, "_%s", map_name + 1);
	for (size_t i = 0; i < name.length; i++) {
		char c = name.data[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			name.data[i] = '_';
	}
	/* a counter's samples get _total: @bytes_total is sonde_bytes_total, not _total_total */
	if (counter && name.length > 6 && strcmp(name.data + name.length - 6, "_total") == 0)
		name.data[name.length -= 6] = '\0';
	return strbuf_release(&name);
}

static const struct serve_label *metrics_find_label(const struct serve_options *options,
						    const char *map)
{
	for (int i = 0; i < options->labels.count; i++)
		if (strcmp(options->labels.items[i].map, map) == 0)
			return &options->labels.items[i];
	return NULL;
}

static int metrics_name_labels(struct family *family, const struct serve_options *options,
			       char **error)
{
	const struct map_desc *map = family->map;
	const struct serve_label *given = metrics_find_label(options, map->name);
	int parts = metrics_key_parts(map);

	family->label_count = parts;
	family->labels = xcalloc((size_t)parts + 1, sizeof(char *));
	if (given && given->count != parts) {
		*error = xasprintf("--label %s gives %d name%s, but %s has %d key part%s", map->name,
				   given->count, given->count == 1 ? "" : "s", map->name, parts,
				   parts == 1 ? "" : "s");
		return -EINVAL;
	}
	for (int i = 0; i < parts; i++) {
		const char *name = given ? given->names[i]
					 : i < map->key_name_count ? map->key_names[i] : NULL;
		bool taken = false;
		for (int j = 0; name && j < i; j++)
			taken |= strcmp(family->labels[j], name) == 0;
		if (given && taken) {
			*error = xasprintf("--label %s names '%s' twice", map->name, name);
			return -EINVAL;
		}
		if (name && metrics_valid_label(name) && !taken)
			family->labels[i] = xstrdup(name);
		else
			family->labels[i] = parts == 1 ? xstrdup("key") : xasprintf("key%d", i);
	}
	return 0;
}

/* Every sample name a family writes, for the clash check. */
static int metrics_sample_names(const struct family *family, char **names)
{
	int count = 0;

	for (int i = 0; family->type->suffixes[i]; i++)
		names[count++] = xasprintf("%s%s", family->name, family->type->suffixes[i]);
	return count;
}

static int metrics_check_clashes(const struct metrics *metrics, char **error)
{
	VEC(char *) names = { 0 };
	VEC(int) owners = { 0 };    /* a family, or -1 - i for metrics_losses[i] */
	int status = 0;

	for (int i = 0; i < METRICS_LOSSES; i++) {
		vec_push(&names, xstrdup(metrics_losses[i].name));
		vec_push(&owners, -1 - i);
		vec_push(&names, xasprintf("%s_total", metrics_losses[i].name));
		vec_push(&owners, -1 - i);
	}
	for (int f = 0; f < metrics->families.count; f++) {
		char *mine[5];
		int count = metrics_sample_names(&metrics->families.items[f], mine);
		for (int i = 0; i < count; i++) {
			for (int j = 0; j < names.count && status == 0; j++) {
				int owner = owners.items[j];
				if (owner == f || strcmp(names.items[j], mine[i]) != 0)
					continue;
				if (owner < 0)
					*error = xasprintf("%s would write the series %s, which is sonde's "
							   "own count of what was lost: rename the map",
							   metrics->families.items[f].map->name, mine[i]);
				else
					*error = xasprintf("%s and %s would both write the series %s: "
							   "rename one of the maps",
							   metrics->families.items[owner].map->name,
							   metrics->families.items[f].map->name, mine[i]);
				status = -EINVAL;
			}
			vec_push(&names, mine[i]);
			vec_push(&owners, f);
		}
	}
	for (int i = 0; i < names.count; i++)
		free(names.items[i]);
	free(names.items);
	free(owners.items);
	return status;
}

static int metrics_compare_maps(const void *a, const void *b)
{
	const struct map_desc *const *left = a, *const *right = b;

	return strcmp((*left)->name, (*right)->name);
}

int metrics_new(const struct program *program, const struct serve_options *options,
		struct metrics **out, struct strbuf *skipped, char **error)
{
	struct metrics *metrics = xcalloc(1, sizeof(*metrics));
	const struct map_desc **maps = xcalloc((size_t)program->maps.count + 1, sizeof(*maps));
	int count = 0, status = 0;

	*out = NULL;
	metrics->program = program;
	for (int i = 0; i < program->maps.count; i++)
		if (program->maps.items[i].role == MAP_ROLE_USER)
			maps[count++] = &program->maps.items[i];
	qsort(maps, (size_t)count, sizeof(*maps), metrics_compare_maps);
	for (int i = 0; i < options->labels.count && status == 0; i++) {
		bool found = false;
		for (int j = 0; j < count; j++)
			found |= strcmp(maps[j]->name, options->labels.items[i].map) == 0;
		if (!found) {
			*error = xasprintf("--label %s: the program has no map %s",
					   options->labels.items[i].map, options->labels.items[i].map);
			status = -EINVAL;
		}
	}
	for (int i = 0; i < count && status == 0; i++) {
		struct family family = { .map = maps[i] };
		if (!metrics_type_of(maps[i], options->tool != NULL, &family)) {
			strbuf_printf(skipped, "%s is not exported: its values are %s%s\n",
				      maps[i]->name, type_name(maps[i]->value_type),
				      maps[i]->value_type->kind == TYPE_INT ? ", a tool's bookkeeping" : "");
			continue;
		}
		family.name = metrics_family_name(options->tool, maps[i]->name,
						  family.type == &metric_counter);
		family.help = xasprintf("%s%s%s: %s of the sonde %s", options->tool ? options->tool : "",
					options->tool ? "'s " : "", maps[i]->name,
					type_name(maps[i]->value_type),
					options->tool ? "tool" : "program");
		vec_push(&metrics->families, family);
		status = metrics_name_labels(&metrics->families.items[metrics->families.count - 1],
					     options, error);
	}
	if (status == 0)
		status = metrics_check_clashes(metrics, error);
	free(maps);
	if (status < 0) {
		metrics_free(metrics);
		return status;
	}
	*out = metrics;
	return 0;
}

void metrics_free(struct metrics *metrics)
{
	if (!metrics)
		return;
	for (int i = 0; i < metrics->families.count; i++) {
		struct family *family = &metrics->families.items[i];
		free(family->name);
		free(family->help);
		for (int j = 0; j < family->label_count; j++)
			free(family->labels[j]);
		free(family->labels);
	}
	free(metrics->families.items);
	free(metrics);
}

/* ---- rendering ---- */

/* A label value inside its quotes: \\, \" and \n as the format says, and
 * bytes that are control characters or not UTF-8 as the text \xNN (its
 * backslash escaped), so whatever a kernel string holds, the line parses. */
static void metrics_put_label_value(struct strbuf *sb, const char *text, size_t length)
{
	const unsigned char *bytes = (const unsigned char *)text;

	for (size_t i = 0; i < length;) {
		unsigned char c = bytes[i];
		uint32_t point;
		size_t run = utf8_decode(bytes + i, length - i, &point);

		if (c == '\\' || c == '"') {
			strbuf_putc(sb, '\\');
			strbuf_putc(sb, (char)c);
		} else if (c == '\n') {
			strbuf_puts(sb, "\\n");
		} else if (run == 0 || c < 0x20 || c == 0x7f) {
			strbuf_printf(sb, "\\\\x%02x", c);
			run = 1;
		} else {
			strbuf_append(sb, text + i, run);
			i += run;
			continue;
		}
		i++;
	}
}

struct metric_writer {
	const struct family *family;
	struct strbuf *out;
	bool openmetrics;
	struct strbuf labels;   /* the current key's, without braces */
	struct strbuf scratch;
};

/* `a="x",b="y"` for one key (no braces) into out->labels. */
static void metrics_set_key(struct metric_writer *out, const unsigned char *key)
{
	const struct family *family = out->family;
	const struct type *type = family->map->key_type;

	strbuf_reset(&out->labels);
	for (int i = 0; i < family->label_count; i++) {
		const struct type *part = type;
		const unsigned char *data = key;
		if (family->label_count > 1 || (family->map->key_is_multi && type->kind == TYPE_TUPLE)) {
			part = type->fields[i].type;
			data = key + type->fields[i].offset;
		}
		strbuf_reset(&out->scratch);
		snapshot_key_text(&out->scratch, part, data);
		strbuf_printf(&out->labels, "%s%s=\"", i ? "," : "", family->labels[i]);
		metrics_put_label_value(&out->labels, out->scratch.data ? out->scratch.data : "",
					out->scratch.length);
		strbuf_putc(&out->labels, '"');
	}
}

/* name+suffix{labels of the current key[,extra]} value */
static void metrics_put_sample(struct metric_writer *out, const char *suffix, const char *extra,
			       uint64_t value, bool is_signed)
{
	struct strbuf *sb = out->out;
	const struct strbuf *labels = &out->labels;

	strbuf_puts(sb, out->family->name);
	strbuf_puts(sb, suffix);
	bool braces = labels->length || extra;
	if (braces)
		strbuf_putc(sb, '{');
	if (labels->length)
		strbuf_append(sb, labels->data, labels->length);
	if (extra)
		strbuf_printf(sb, "%s%s", labels->length ? "," : "", extra);
	if (braces)
		strbuf_putc(sb, '}');
	if (is_signed)
		strbuf_printf(sb, " %lld\n", (long long)(int64_t)value);
	else
		strbuf_printf(sb, " %llu\n", (unsigned long long)value);
}

static void metrics_put_header(struct metric_writer *out, const char *name, const char *suffix,
			       const char *help, const char *type)
{
	/* OpenMetrics names the family (sonde_x); the text format names
	 * counters by their samples (sonde_x_total) */
	if (out->openmetrics) {
		strbuf_printf(out->out, "# TYPE %s%s %s\n# HELP %s%s %s\n", name, suffix, type, name,
			      suffix, help);
	} else {
		const char *sample = strcmp(type, "counter") == 0 ? "_total" : "";
		strbuf_printf(out->out, "# HELP %s%s%s %s\n# TYPE %s%s%s %s\n", name, suffix, sample,
			      help, name, suffix, sample, type);
	}
}

struct metrics_entry {
	const unsigned char *key;
	const unsigned char *value;
};

static int metrics_compare_entries(const void *a, const void *b, void *key_type)
{
	const struct metrics_entry *left = a, *right = b;

	return snapshot_compare_keys(key_type, left->key, right->key);
}

/* The snapshot's entries in key order; free the array. */
static struct metrics_entry *metrics_sorted_entries(const struct metric_writer *out,
						    const struct map_snapshot *snap)
{
	struct metrics_entry *entries = xcalloc((size_t)snap->count + 1, sizeof(*entries));

	for (int i = 0; i < snap->count; i++) {
		entries[i].key = snapshot_key(snap, i);
		entries[i].value = snapshot_value(snap, i);
	}
	if (out->family->map->key_type)
		qsort_r(entries, (size_t)snap->count, sizeof(*entries), metrics_compare_entries,
			out->family->map->key_type);
	return entries;
}

void metrics_put_numbers(struct metric_writer *out, const struct map_snapshot *snap)
{
	const struct family *family = out->family;
	const struct type *type = family->map->value_type;
	struct metrics_entry *entries = metrics_sorted_entries(out, snap);
	bool counter = family->type == &metric_counter;

	metrics_put_header(out, family->name, "", family->help, family->type->name);
	for (int i = 0; i < snap->count; i++) {
		metrics_set_key(out, entries[i].key);
		metrics_put_sample(out, counter ? "_total" : "", NULL,
				   snapshot_fold(snap, type, entries[i].value), type->is_signed);
	}
	free(entries);
}

void metrics_put_summaries(struct metric_writer *out, const struct map_snapshot *snap)
{
	const struct family *family = out->family;
	const struct type *type = family->map->value_type;
	struct metrics_entry *entries = metrics_sorted_entries(out, snap);
	char *help = xasprintf("%s, its average", family->help);

	metrics_put_header(out, family->name, "", family->help, "summary");
	for (int i = 0; i < snap->count; i++) {
		metrics_set_key(out, entries[i].key);
		metrics_put_sample(out, "_count", NULL, aggregation_fold_sum(snap, entries[i].value, 1),
				   false);
		metrics_put_sample(out, "_sum", NULL, aggregation_fold_sum(snap, entries[i].value, 0),
				   type->is_signed);
	}
	/* the average is a gauge family of its own, after the summary's samples */
	metrics_put_header(out, family->name, "_avg", help, "gauge");
	for (int i = 0; i < snap->count; i++) {
		metrics_set_key(out, entries[i].key);
		metrics_put_sample(out, "_avg", NULL, snapshot_fold(snap, type, entries[i].value),
				   type->is_signed);
	}
	free(help);
	free(entries);
}

void metrics_put_histograms(struct metric_writer *out, const struct map_snapshot *snap,
			    bool every_bucket)
{
	const struct family *family = out->family;
	const struct type *type = family->map->value_type;
	const struct aggregation *aggregation = type->aggregation;
	struct print_entry *groups;
	int group_count = snapshot_histograms(family->map, snap, &groups);
	int size = aggregation->bucket_count(type);
	struct strbuf bound;

	strbuf_init(&bound);
	metrics_put_header(out, family->name, "", family->help, "histogram");
	for (int g = 0; g < group_count; g++) {
		const struct print_entry *group = &groups[g];
		int last = -1;
		uint64_t cumulative = 0;

		metrics_set_key(out, group->key);
		for (int i = 0; i < group->bucket_count; i++)
			if (group->buckets[i])
				last = i;
		int end = every_bucket ? size : last + 1;
		for (int i = 0; i < end; i++) {
			uint64_t here = i < group->bucket_count ? group->buckets[i] : 0;
			cumulative += here;
			if (!every_bucket && i == 0 && here == 0)
				continue;
			strbuf_reset(&bound);
			strbuf_puts(&bound, "le=\"");
			if (!aggregation->put_bucket_upper(&bound, type, i))
				continue;
			strbuf_putc(&bound, '"');
			metrics_put_sample(out, "_bucket", bound.data, cumulative, false);
		}
		metrics_put_sample(out, "_bucket", "le=\"+Inf\"", group->order, false);
		metrics_put_sample(out, "_sum", NULL, group->sum, true);
		metrics_put_sample(out, "_count", NULL, group->order, false);
	}
	strbuf_free(&bound);
	snapshot_histograms_free(groups, group_count);
}

int metrics_render(const struct metrics *metrics, struct strbuf *out, bool openmetrics)
{
	struct metric_writer writer = { .out = out, .openmetrics = openmetrics };
	int status = 0;

	strbuf_init(&writer.labels);
	strbuf_init(&writer.scratch);
	for (int f = 0; f < metrics->families.count; f++) {
		const struct family *family = &metrics->families.items[f];
		struct map_snapshot snap;
		int err = snapshot_read(family->map, &snap);

		if (err) {
			status = err;
			continue;
		}
		writer.family = family;
		family->put_metrics(&writer, &snap);
		snapshot_free(&snap);
	}
	struct losses losses;
	losses_read(metrics->program, &losses);
	for (int i = 0; i < METRICS_LOSSES; i++) {
		uint64_t count;
		memcpy(&count, (const char *)&losses + metrics_losses[i].offset, sizeof(count));
		metrics_put_header(&writer, metrics_losses[i].name, "", metrics_losses[i].help,
				   "counter");
		strbuf_printf(out, "%s_total %llu\n", metrics_losses[i].name,
			      (unsigned long long)count);
	}
	strbuf_free(&writer.labels);
	strbuf_free(&writer.scratch);
	if (openmetrics)
		strbuf_puts(out, "# EOF\n");
	return status;
}
