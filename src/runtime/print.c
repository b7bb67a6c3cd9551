/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Printing maps: what you see when a program ends or calls print(@m).
 *
 * print_map() takes a snapshot of a map from the kernel (every key, and
 * every CPU's copy of each value for per-CPU maps), folds the per-CPU
 * copies into one value, sorts, and writes text or JSON in bpftrace's
 * layout. The layouts of keys and values are the ones program.h describes.
 *
 * One layout serves every map (put_map), as current bpftrace prints them:
 * sorted entries, each "@m[key]: value" (a histogram on the lines under
 * "@m[key]:", then a blank line), and what sorts and what prints after the
 * key differs by the values:
 *  - plain values, count, sum, min, max: by value for numbers; strings,
 *    tuples and addresses by key.
 *  - avg and stats: by average; stats prints { .count, .average, .total }.
 *  - hist and lhist, whose BPF key carries a bucket number after the user
 *    key: entries are grouped by user key, and each group is drawn as bars
 *    from its lowest to its highest non-empty bucket. Groups sort by their
 *    total count.
 *
 * Ties sort by key so output is reproducible (bpftrace breaks ties for
 * hist/avg/stats by key bytes, and leaves plain maps in hash order).
 */
#include "runtime/snapshot.h"

#include "aggregations/aggregation.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Width of a histogram bar at the largest bucket. */
#define PRINT_BAR_WIDTH 52

/* ---- snapshot ---- */

static bool print_map_is_per_cpu(const struct map_desc *map)
{
	return map->bpf_map_type == BPF_MAP_TYPE_PERCPU_HASH ||
	       map->bpf_map_type == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       map->bpf_map_type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

void snapshot_free(struct map_snapshot *snap)
{
	free(snap->keys);
	free(snap->values);
	memset(snap, 0, sizeof(*snap));
}

/* Entries asked for per BPF_MAP_LOOKUP_BATCH call, at first: a hash
 * bucket holding more makes the kernel say ENOSPC, and the chunk doubles. */
#define SNAPSHOT_BATCH_FIRST 1024

static void snapshot_reserve(struct map_snapshot *snap, int *capacity, int wanted,
			     size_t value_bytes)
{
	if (wanted <= *capacity)
		return;
	while (*capacity < wanted)
		*capacity *= 2;
	snap->keys = xrealloc(snap->keys, (size_t)*capacity * snap->key_size);
	snap->values = xrealloc(snap->values, (size_t)*capacity * value_bytes);
}

/*
 * Every element in a few system calls (BPF_MAP_LOOKUP_BATCH, Linux 5.6):
 * one lookup per key costs two system calls each, some 70 ms for 10,000
 * keys, which a scrape of sonde serve cannot afford. -errno when the
 * kernel or the map type has no batch lookup; the caller then walks.
 */
static int snapshot_read_batch(const struct map_desc *map, struct map_snapshot *snap,
			       int *capacity, size_t value_bytes)
{
	size_t token_size = snap->key_size > 8 ? snap->key_size : 8;
	unsigned char *tokens = xcalloc(2, token_size);
	unsigned char *in = tokens, *out = tokens + token_size;
	uint32_t chunk = SNAPSHOT_BATCH_FIRST;
	bool started = false;
	int err = 0;

	for (;;) {
		uint32_t got = chunk;
		snapshot_reserve(snap, capacity, snap->count + (int)chunk, value_bytes);
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		err = bpf_map_lookup_batch(map->fd, started ? in : NULL, out,
					   snap->keys + (size_t)snap->count * snap->key_size,
					   snap->values + (size_t)snap->count * value_bytes, &got,
					   &opts);
		err = err < 0 ? -errno : 0;
		if (err == -ENOSPC && got == 0 && chunk < (1u << 20)) {
			chunk *= 2;
			continue;
		}
		if (err && err != -ENOENT)
			break;
		snap->count += (int)got;
		if (err == -ENOENT) {
			err = 0;
			break;
		}
		unsigned char *swap = in;
		in = out;
		out = swap;
		started = true;
	}
	free(tokens);
	return err;
}

/*
 * Reads every element: in batches where the kernel can, else key by key.
 * Keys that vanish between get_next_key and lookup (a BPF program deleted
 * them) are skipped; a deleted predecessor makes the kernel restart from
 * the first key, so the walk is bounded.
 */
int snapshot_read(const struct map_desc *map, struct map_snapshot *snap)
{
	memset(snap, 0, sizeof(*snap));
	if (map->fd < 0)
		return -EBADF;
	snap->key_size = map->key_size;
	snap->ncpus = 1;
	snap->value_stride = map->value_size;
	if (print_map_is_per_cpu(map)) {
		int ncpus = libbpf_num_possible_cpus();
		if (ncpus <= 0)
			return ncpus < 0 ? ncpus : -EINVAL;
		snap->ncpus = ncpus;
		snap->value_stride = (map->value_size + 7) & ~7u;
	}
	size_t value_bytes = (size_t)snap->value_stride * snap->ncpus;
	int capacity = 16;
	snap->keys = xcalloc(capacity, snap->key_size);
	snap->values = xcalloc(capacity, value_bytes);

	/* arrays keep their simple walk: batches of them return every slot
	 * in index order anyway, and their sizes are small */
	bool is_hash = map->bpf_map_type == BPF_MAP_TYPE_HASH ||
		       map->bpf_map_type == BPF_MAP_TYPE_PERCPU_HASH ||
		       map->bpf_map_type == BPF_MAP_TYPE_LRU_HASH ||
		       map->bpf_map_type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	if (is_hash && snapshot_read_batch(map, snap, &capacity, value_bytes) == 0)
		return 0;
	snap->count = 0;

	unsigned char *cursor = xcalloc(2, snap->key_size);
	unsigned char *next = cursor + snap->key_size;
	bool started = false;
	long limit = 2L * (map->max_entries ? map->max_entries : 1) + 16;
	while (limit-- > 0 && bpf_map_get_next_key(map->fd, started ? cursor : NULL, next) == 0) {
		snapshot_reserve(snap, &capacity, snap->count + 1, value_bytes);
		unsigned char *value = snap->values + (size_t)snap->count * value_bytes;
		memset(value, 0, value_bytes);
		if (bpf_map_lookup_elem(map->fd, next, value) == 0) {
			memcpy(snap->keys + (size_t)snap->count * snap->key_size, next, snap->key_size);
			snap->count++;
		}
		memcpy(cursor, next, snap->key_size);
		started = true;
	}
	free(cursor);
	return 0;
}

const unsigned char *snapshot_key(const struct map_snapshot *snap, int i)
{
	return snap->keys + (size_t)i * snap->key_size;
}

const unsigned char *snapshot_value(const struct map_snapshot *snap, int i)
{
	return snap->values + (size_t)i * snap->value_stride * snap->ncpus;
}

/* ---- folding per-CPU values ---- */

static uint64_t print_read_u64(const unsigned char *data)
{
	uint64_t value;

	memcpy(&value, data, sizeof(value));
	return value;
}

/* The number a plain map sorts by and prints (before div); avg() maps their average. */
uint64_t snapshot_fold(const struct map_snapshot *snap, const struct type *type,
			   const unsigned char *value)
{
	if (type->kind == TYPE_AGGREGATION)
		return type->aggregation->fold(snap, type, value);
	return print_read_u64(value);
}

static int compare_numbers(uint64_t a, uint64_t b, bool is_signed)
{
	if (is_signed)
		return (int64_t)a < (int64_t)b ? -1 : (int64_t)a > (int64_t)b;
	return a < b ? -1 : a > b;
}

static uint64_t divide(uint64_t value, bool is_signed, int div)
{
	if (div <= 1)
		return value;
	if (is_signed)
		return (uint64_t)((int64_t)value / (int64_t)div);
	return value / (uint64_t)div;
}

/* ---- keys ---- */

/* Key order by meaning: numbers numerically, strings alphabetically. */
int snapshot_compare_keys(const struct type *type, const unsigned char *a, const unsigned char *b)
{
	if (!type)
		return 0;
	switch (type->kind) {
	case TYPE_INT:
		return compare_numbers(print_read_u64(a), print_read_u64(b), type->is_signed);
	case TYPE_POINTER:
		return compare_numbers(print_read_u64(a), print_read_u64(b), false);
	case TYPE_STRING: {
		int c = strncmp((const char *)a, (const char *)b, type->size);
		return c < 0 ? -1 : c > 0;
	}
	case TYPE_TUPLE:
		for (int i = 0; i < type->field_count; i++) {
			int offset = type->fields[i].offset;
			int c = snapshot_compare_keys(type->fields[i].type, a + offset, b + offset);
			if (c)
				return c;
		}
		return 0;
	default: {
		int c = memcmp(a, b, type_storage_size(type));
		return c < 0 ? -1 : c > 0;
	}
	}
}

/* One key element as bpftrace shows it; pointers in keys are hex, stack
 * frames are indented by 4 rather than 8. */
void snapshot_key_text(struct strbuf *sb, const struct type *type, const unsigned char *data)
{
	if (type->kind == TYPE_POINTER)
		strbuf_printf(sb, "0x%llx", (unsigned long long)print_read_u64(data));
	else if (type->kind == TYPE_STACK)
		format_stack(sb, type, data, 4);
	else
		format_value(sb, type, data, false);
}

/* One key element; JSON keeps an enum's number, as current bpftrace. */
static void put_key_element(struct strbuf *sb, const struct type *type, const unsigned char *data,
			    bool json)
{
	if (json && type->kind == TYPE_INT && type->enumeration)
		strbuf_printf(sb, type->is_signed ? "%lld" : "%llu", (long long)print_read_u64(data));
	else
		snapshot_key_text(sb, type, data);
}

/* "a, b" for @m[a, b]; JSON joins with "," instead. */
static void put_key_elements(struct strbuf *sb, const struct map_desc *map,
			     const unsigned char *key, bool json)
{
	const struct type *type = map->key_type;

	if (map->key_is_multi && type->kind == TYPE_TUPLE) {
		for (int i = 0; i < type->field_count; i++) {
			if (i)
				strbuf_puts(sb, json ? "," : ", ");
			put_key_element(sb, type->fields[i].type, key + type->fields[i].offset, json);
		}
	} else {
		put_key_element(sb, type, key, json);
	}
}

static void put_json_string(struct strbuf *sb, const char *text, size_t length)
{
	struct type string_type = { .kind = TYPE_STRING, .size = (int)length };

	format_value(sb, &string_type, text, true);
}

/* Text: "@name[key]: ", or "@name[key]:" and a new line when the value
 * takes lines of its own (a histogram); JSON: "\"key\": " (nothing for maps
 * without keys). */
void print_entry_start(struct strbuf *sb, const struct map_desc *map, const unsigned char *key,
		       bool json, bool value_below)
{
	if (json) {
		if (!map->key_type)
			return;
		struct strbuf text;
		strbuf_init(&text);
		put_key_elements(&text, map, key, true);
		put_json_string(sb, text.data ? text.data : "", text.length);
		strbuf_free(&text);
		strbuf_puts(sb, ": ");
		return;
	}
	print_entry_name(sb, map, key);
	strbuf_puts(sb, value_below ? ":\n" : ": ");
}

void print_entry_name(struct strbuf *sb, const struct map_desc *map, const unsigned char *key)
{
	strbuf_puts(sb, map->name);
	if (map->key_type) {
		strbuf_putc(sb, '[');
		put_key_elements(sb, map, key, false);
		strbuf_putc(sb, ']');
	}
}

void print_json_header(struct strbuf *sb, const struct map_desc *map, const char *kind)
{
	strbuf_printf(sb, "{\"type\": \"%s\", \"data\": {", kind);
	put_json_string(sb, map->name, strlen(map->name));
	strbuf_puts(sb, ": ");
	if (map->key_type)
		strbuf_putc(sb, '{');
}

void print_json_footer(struct strbuf *sb, const struct map_desc *map)
{
	if (map->key_type)
		strbuf_putc(sb, '}');
	strbuf_puts(sb, "}}\n");
}

/* ---- sorting ---- */

struct sort_context {
	const struct map_desc *map;
	int user_key_size;
	bool by_value;
	bool value_signed;
	bool ties_by_bytes; /* hist, avg, stats: bpftrace orders equal values by key bytes */
};

static int compare_entries(const void *pa, const void *pb, void *arg)
{
	const struct print_entry *a = pa;
	const struct print_entry *b = pb;
	const struct sort_context *context = arg;
	int c;

	if (context->by_value) {
		c = compare_numbers(a->order, b->order, context->value_signed);
		if (c)
			return c;
	}
	if (!context->ties_by_bytes) {
		c = snapshot_compare_keys(context->map->key_type, a->key, b->key);
		if (c)
			return c;
	}
	c = memcmp(a->key, b->key, context->user_key_size);
	return c < 0 ? -1 : c > 0;
}

/* Bytes of the user key: its storage size rounded up to 8, as the code
 * generator pads it (a hist/lhist bucket number follows). */
int snapshot_user_key_size(const struct map_desc *map)
{
	int size = map->key_type ? (type_storage_size(map->key_type) + 7) & ~7 : 0;
	bool bucketed = type_is_bucketed(map->value_type);
	int available = (int)map->key_size - (bucketed ? 8 : 0);

	return size < available ? size : available < 0 ? 0 : available;
}

/* First entry to print for print(@m, top): the last `top` after sorting. */
static int first_shown(int count, int top)
{
	return top > 0 && count > top ? count - top : 0;
}

/* ---- the layout every map shares ---- */

/* Writes one entry's value after its key (put_entry_start). */
typedef void put_value_fn(struct strbuf *sb, const struct map_desc *map,
			  const struct map_snapshot *snap, const struct print_entry *entry,
			  int div, bool json);

struct map_layout {
	const char *json_kind;  /* the JSON record's "type": map, stats, hist */
	bool value_below;       /* the value takes lines of its own (histograms) */
	put_value_fn *put_value;
};

/*
 * Every map prints the same way, whatever its values: entries sorted
 * (`order`), the last `top` of them, in text one "@m[key]: value" line each
 * (a histogram under "@m[key]:", then a blank line); in JSON one record,
 * {"type": KIND, "data": {"@m": {"key": value, ...}}} ({"@m": value} without
 * keys). A map without entries prints nothing, as in current bpftrace
 * (0.17 printed an empty line in text).
 */
static void put_map(struct strbuf *sb, const struct map_desc *map, const struct map_snapshot *snap,
		    struct print_entry *entries, int count, const struct sort_context *order,
		    int top, int div, bool json, const struct map_layout *layout)
{
	qsort_r(entries, count, sizeof(*entries), compare_entries, (void *)order);
	if (count == 0)
		return;
	int first = first_shown(count, top);
	if (json)
		print_json_header(sb, map, layout->json_kind);
	for (int i = first; i < count; i++) {
		if (json && i > first)
			strbuf_puts(sb, ", ");
		print_entry_start(sb, map, entries[i].key, json, layout->value_below);
		layout->put_value(sb, map, snap, &entries[i], div, json);
		if (!json)
			strbuf_putc(sb, '\n');
	}
	if (json)
		print_json_footer(sb, map);
}

/* ---- plain maps ---- */

static bool sorts_by_value(enum type_kind kind)
{
	return kind == TYPE_INT || kind == TYPE_AGGREGATION;
}

static void put_plain_value(struct strbuf *sb, const struct map_desc *map,
			    const struct map_snapshot *snap, const struct print_entry *entry,
			    int div, bool json)
{
	const struct type *type = map->value_type;

	if (type->kind == TYPE_AGGREGATION || (type->kind == TYPE_INT && !type->int_names &&
					       !type->strftime_format && !type->is_bool &&
					       !(type->enumeration && !json && div <= 1))) {
		/* the folded number of count, sum, min, max; plain integers */
		format_number(sb, divide(entry->order, type->is_signed, div), type->is_signed, json);
		return;
	}
	format_value(sb, type, entry->value, json);
}

static const struct map_layout plain_layout = { "map", false, put_plain_value };

void print_map_numbers(struct strbuf *sb, const struct map_desc *map,
		       const struct map_snapshot *snap, int top, int div, bool json)
{
	const struct type *type = map->value_type;
	struct print_entry *entries = xcalloc(snap->count, sizeof(*entries));
	struct sort_context order = {
		.map = map,
		.user_key_size = snapshot_user_key_size(map),
		.by_value = sorts_by_value(type->kind),
		.value_signed = type->is_signed,
	};

	for (int i = 0; i < snap->count; i++) {
		entries[i].key = snapshot_key(snap, i);
		entries[i].value = snapshot_value(snap, i);
		entries[i].order = snapshot_fold(snap, type, entries[i].value);
	}
	put_map(sb, map, snap, entries, snap->count, &order, top, div, json, &plain_layout);
	free(entries);
}

/* ---- avg and stats ---- */

static void put_average(struct strbuf *sb, const struct map_desc *map,
			const struct map_snapshot *snap, const struct print_entry *entry,
			int div, bool json)
{
	bool is_signed = map->value_type->is_signed;

	format_number(sb, divide(entry->order, is_signed, div), is_signed, json);
}

/* stats: { .count = 2, .average = 6, .total = 13 } as current bpftrace
 * prints the record (0.17: "count 2, average 6, total 13"); JSON's object
 * has the same fields */
static void put_stats(struct strbuf *sb, const struct map_desc *map,
		      const struct map_snapshot *snap, const struct print_entry *entry,
		      int div, bool json)
{
	bool is_signed = map->value_type->is_signed;

	strbuf_puts(sb, json ? "{\"count\": " : "{ .count = ");
	format_number(sb, aggregation_fold_sum(snap, entry->value, 1), false, json);
	strbuf_puts(sb, json ? ", \"average\": " : ", .average = ");
	put_average(sb, map, snap, entry, div, json);
	strbuf_puts(sb, json ? ", \"total\": " : ", .total = ");
	format_number(sb, aggregation_fold_sum(snap, entry->value, 0), is_signed, json);
	strbuf_puts(sb, json ? "}" : " }");
}

static const struct map_layout average_layout = { "stats", false, put_average };
static const struct map_layout stats_layout = { "stats", false, put_stats };

void print_map_averages(struct strbuf *sb, const struct map_desc *map,
			const struct map_snapshot *snap, int top, int div, bool json, bool is_stats)
{
	const struct type *type = map->value_type;
	struct print_entry *entries = xcalloc(snap->count, sizeof(*entries));
	struct sort_context order = {
		.map = map,
		.user_key_size = snapshot_user_key_size(map),
		.by_value = true,
		.value_signed = type->is_signed,
		.ties_by_bytes = true,
	};

	for (int i = 0; i < snap->count; i++) {
		entries[i].key = snapshot_key(snap, i);
		entries[i].value = snapshot_value(snap, i);
		entries[i].order = aggregation_fold_average(snap, entries[i].value, type->is_signed);
	}
	/* print(@s, top, div) leaves stats() maps whole, as bpftrace does. */
	if (is_stats)
		put_map(sb, map, snap, entries, snap->count, &order, 0, 1, json, &stats_layout);
	else
		put_map(sb, map, snap, entries, snap->count, &order, top, div, json, &average_layout);
	free(entries);
}

/* ---- hist and lhist ---- */

/* One histogram's body: a line per bucket from the first to the last non-empty one. */
static void put_histogram(struct strbuf *sb, const struct type *type, const uint64_t *buckets,
			  int size, int div, bool json)
{
	int first = -1, last = -1;
	uint64_t largest = 0;

	for (int i = 0; i < size; i++) {
		if (buckets[i] == 0)
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (buckets[i] > largest)
			largest = buckets[i];
	}
	if (json)
		strbuf_putc(sb, '[');
	bool any = false;
	for (int i = first; first >= 0 && i <= last; i++) {
		if (!type->aggregation->bucket_is_drawn(type, i))
			continue;
		uint64_t shown = divide(buckets[i], false, div);
		if (json) {
			if (any)
				strbuf_puts(sb, ", ");
			strbuf_putc(sb, '{');
			type->aggregation->put_bucket_bounds(sb, type, i);
			strbuf_puts(sb, "\"count\": ");
			format_number(sb, shown, false, true);
			strbuf_putc(sb, '}');
		} else {
			struct strbuf label;
			char bar[PRINT_BAR_WIDTH + 1];
			/* float, as bpftrace computes it, so bar lengths round the same way */
			int width = (int)((float)buckets[i] / (float)largest * PRINT_BAR_WIDTH);

			strbuf_init(&label);
			type->aggregation->put_bucket_label(&label, type, i);
			memset(bar, '@', width);
			bar[width] = '\0';
			strbuf_printf(sb, "%-16s%8llu |%-*s|\n", label.data, (unsigned long long)shown,
				      PRINT_BAR_WIDTH, bar);
			strbuf_free(&label);
		}
		any = true;
	}
	if (json)
		strbuf_putc(sb, ']');
}

/* The bucket of a hist/lhist key: a u64 after the user key, or, for a
 * keyless histogram kept in a per-CPU array, the u32 array index itself. */
static uint64_t key_bucket(const unsigned char *key, int key_bytes, bool is_array)
{
	if (is_array) {
		uint32_t index;
		memcpy(&index, key, sizeof(index));
		return index;
	}
	return print_read_u64(key + key_bytes);
}

struct bucket_order {
	int key_bytes;
	bool is_array;
};

static int compare_by_key_bytes(const void *pa, const void *pb, void *arg)
{
	const unsigned char *const *a = pa;
	const unsigned char *const *b = pb;
	const struct bucket_order *how = arg;
	int c = memcmp(*a, *b, how->key_bytes);

	if (c)
		return c < 0 ? -1 : 1;
	uint64_t bucket_a = key_bucket(*a, how->key_bytes, how->is_array);
	uint64_t bucket_b = key_bucket(*b, how->key_bytes, how->is_array);
	return bucket_a < bucket_b ? -1 : bucket_a > bucket_b;
}

int snapshot_histograms(const struct map_desc *map, const struct map_snapshot *snap,
			struct print_entry **out)
{
	const struct type *type = map->value_type;
	int key_bytes = snapshot_user_key_size(map);
	bool is_array = map->bpf_map_type == BPF_MAP_TYPE_PERCPU_ARRAY;
	struct bucket_order how = { is_array ? 0 : key_bytes, is_array };
	int size = type->aggregation->bucket_count(type);
	bool has_sums = aggregation_map_has_sums(map);
	const unsigned char **order = xcalloc(snap->count, sizeof(*order));
	struct print_entry *groups = xcalloc(snap->count, sizeof(*groups));
	int group_count = 0;

	/*
	 * Group the (user key, bucket) entries by user key. Sorted by key then
	 * bucket, a group's last entry holds its highest bucket, which bounds
	 * the array it needs (hist(x, k) has 2 + 64 * 2^k possible buckets).
	 */
	for (int i = 0; i < snap->count; i++)
		order[i] = snapshot_key(snap, i);
	if (is_array)
		key_bytes = 0;
	qsort_r(order, snap->count, sizeof(*order), compare_by_key_bytes, &how);
	for (int start = 0, end; start < snap->count; start = end) {
		struct print_entry *group = &groups[group_count++];
		group->key = order[start];
		for (end = start + 1; end < snap->count; end++)
			if (memcmp(order[end], group->key, key_bytes) != 0)
				break;
		uint64_t highest = key_bucket(order[end - 1], key_bytes, is_array);
		group->bucket_count = highest < (uint64_t)size ? (int)highest + 1 : size;
		group->buckets = xcalloc(group->bucket_count, sizeof(uint64_t));
		for (int i = start; i < end; i++) {
			int index = (int)((order[i] - snap->keys) / snap->key_size);
			uint64_t bucket = key_bucket(order[i], key_bytes, is_array);
			const unsigned char *value = snapshot_value(snap, index);
			uint64_t count = aggregation_fold_sum(snap, value, 0);
			if (bucket < (uint64_t)group->bucket_count) {
				group->buckets[bucket] += count;
				group->order += count;
				if (has_sums)
					group->sum += aggregation_fold_sum(snap, value, 1);
			}
		}
		/* an array has every bucket, hit or not: a histogram nothing
		 * reached is not printed, as when it lives in a hash */
		if (is_array && group->order == 0) {
			free(group->buckets);
			group_count--;
		}
	}
	free(order);
	*out = groups;
	return group_count;
}

void snapshot_histograms_free(struct print_entry *groups, int count)
{
	for (int i = 0; i < count; i++)
		free(groups[i].buckets);
	free(groups);
}

static void put_histogram_value(struct strbuf *sb, const struct map_desc *map,
				const struct map_snapshot *snap, const struct print_entry *entry,
				int div, bool json)
{
	put_histogram(sb, map->value_type, entry->buckets, entry->bucket_count, div, json);
}

static const struct map_layout histogram_layout = { "hist", true, put_histogram_value };

void print_map_histograms(struct strbuf *sb, const struct map_desc *map,
			  const struct map_snapshot *snap, int top, int div, bool json)
{
	bool is_array = map->bpf_map_type == BPF_MAP_TYPE_PERCPU_ARRAY;
	struct print_entry *groups;
	int group_count = snapshot_histograms(map, snap, &groups);
	static const unsigned char no_key[8];

	/* zero(@h) of a histogram without keys: bpftrace keeps a zeroed entry
	 * and prints `@h:` with no buckets; an array's entry looks the same
	 * whether zeroed or never reached, so the runtime remembers zero() */
	if (group_count == 0 && is_array && map->zeroed) {
		groups = xrealloc(groups, sizeof(*groups));
		groups[0] = (struct print_entry){ .key = no_key };
		group_count = 1;
	}

	struct sort_context order = {
		.map = map,
		.user_key_size = is_array ? 0 : snapshot_user_key_size(map),
		.by_value = true,
		.ties_by_bytes = true,
	};
	put_map(sb, map, snap, groups, group_count, &order, top, div, json, &histogram_layout);
	snapshot_histograms_free(groups, group_count);
}

/* ---- entry points ---- */

int print_map(const struct output *out, const struct map_desc *map, int top, int div)
{
	struct map_snapshot snap;
	struct strbuf sb;
	int err = snapshot_read(map, &snap);

	if (err)
		return err;
	if (div <= 0)
		div = 1;
	strbuf_init(&sb);
	if (map->value_type->kind == TYPE_AGGREGATION)
		map->value_type->aggregation->print(&sb, map, &snap, top, div, out->json);
	else
		print_map_numbers(&sb, map, &snap, top, div, out->json);
	if (sb.length)
		fwrite(sb.data, 1, sb.length, out->file);
	fflush(out->file);
	strbuf_free(&sb);
	snapshot_free(&snap);
	return 0;
}

void print_value(const struct output *out, const struct type *type, const void *data)
{
	struct strbuf sb;

	strbuf_init(&sb);
	if (out->json) {
		strbuf_puts(&sb, "{\"type\": \"value\", \"data\": ");
		format_value(&sb, type, data, true);
		strbuf_puts(&sb, "}\n");
	} else {
		format_value(&sb, type, data, false);
		strbuf_putc(&sb, '\n');
	}
	fwrite(sb.data, 1, sb.length, out->file);
	fflush(out->file);
	strbuf_free(&sb);
}
