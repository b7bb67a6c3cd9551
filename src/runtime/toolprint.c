/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Printing maps the way libbpf-tools does: print_log2_hist(),
 * print_linear_hist() and print_top(), for sonde's ports of the BCC and
 * libbpf-tools tools.
 *
 * The layouts are those of libbpf-tools' trace_helpers.c (print_log2_hist,
 * print_linear_hist: 40 stars, widths that grow past 32 slots) and of the
 * tables its tools print with printf (syscount, softirqs). What differs is
 * where the numbers come from:
 *  - hist() buckets are bpftrace's (program.h: negatives, zero, then one
 *    bucket per power of two, maybe split in 2^k parts); libbpf-tools' slot
 *    s holds the values with floor(log2 v) = s, 0 and 1 both in slot 0. The
 *    buckets are folded into slots; negative values have no slot and are
 *    not shown.
 *  - lhist() buckets 1..n become slots 0..n-1 and the bucket of values at
 *    or above max becomes slot n, the way libbpf-tools' tools clamp into
 *    their last slot; values below min have no slot and are not shown.
 *  - A keyed map prints one histogram per key, in ascending key order, each
 *    after its label (the event's format applied to the key's fields) and
 *    followed by the event's trailer text.
 *
 * Labels and print_top rows are rendered by format_event() from a row the
 * runtime assembles: the user key as the map stores it, then one u64 per
 * value column, at the offsets the compiler put in the event's args. In
 * JSON mode each histogram or row is one object whose fields are named by
 * the event's field_names.
 */
#include "runtime/snapshot.h"
#include "aggregations/aggregation.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TOOLPRINT_STARS 40
#define TOOLPRINT_LOG2_SLOTS 64

/* Writes and frees what was printed. */
static void put_output(const struct output *out, struct strbuf *sb)
{
	if (sb->length)
		fwrite(sb->data, 1, sb->length, out->file);
	fflush(out->file);
	strbuf_free(sb);
}

/* ---- rows ---- */

/* Bytes a row needs: up to the end of its last column. */
static size_t row_size(const struct event_desc *event)
{
	size_t size = 8;

	for (int i = 0; i < event->arg_count; i++) {
		const struct event_arg *arg = &event->args[i];
		size_t end = (size_t)arg->offset + ((type_storage_size(arg->type) + 7) & ~7);
		if (end > size)
			size = end;
	}
	return size;
}

/* A fresh row holding a map's user key at offset 8. */
static unsigned char *row_with_key(const struct event_desc *event, const struct map_desc *map,
				   const unsigned char *key)
{
	unsigned char *row = xcalloc(1, row_size(event) + (size_t)snapshot_user_key_size(map));

	memcpy(row + 8, key, snapshot_user_key_size(map));
	return row;
}

/* ---- histograms ---- */

static void put_stars(struct strbuf *sb, uint64_t value, uint64_t largest, int width)
{
	uint64_t shown = value < largest ? value : largest;
	int stars = largest ? (int)(shown * (uint64_t)width / largest) : 0;

	for (int i = 0; i < stars; i++)
		strbuf_putc(sb, '*');
	strbuf_printf(sb, "%*s", width - stars, "");
	if (value > largest)
		strbuf_putc(sb, '+');
}

/* libbpf-tools' slots of one histogram; returns the last non-empty slot, or -1. */
static int log2_slots(const struct type *type, const struct print_entry *group, uint64_t *slots)
{
	int last = -1;

	memset(slots, 0, TOOLPRINT_LOG2_SLOTS * sizeof(*slots));
	for (int b = 1; b < group->bucket_count; b++) {
		int64_t low;
		if (!group->buckets[b] || !type->aggregation->bucket_low(type, b, &low))
			continue;
		/* the power of two the bucket lies in; 0 and 1 share the first */
		int slot = (uint64_t)low <= 1 ? 0 : 63 - __builtin_clzll((uint64_t)low);
		if (slot >= TOOLPRINT_LOG2_SLOTS)
			continue;
		slots[slot] += group->buckets[b];
		if (slot > last)
			last = slot;
	}
	return last;
}

static int linear_slots(const struct type *type, const struct print_entry *group, uint64_t *slots,
			int slot_count)
{
	int last = -1;

	memset(slots, 0, slot_count * sizeof(*slots));
	for (int b = 1; b < group->bucket_count && b <= slot_count; b++) {
		slots[b - 1] = group->buckets[b];
		if (slots[b - 1])
			last = b - 1;
	}
	return last;
}

/* A linear histogram's slot i is its bucket i + 1 (0 holds what is below min). */
static int64_t linear_low(const struct type *type, int slot)
{
	int64_t low = 0;

	type->aggregation->bucket_low(type, slot + 1, &low);
	return low;
}

static int64_t linear_step(const struct type *type)
{
	return linear_low(type, 1) - linear_low(type, 0);
}

static void log2_bounds(int slot, uint64_t *low, uint64_t *high)
{
	*low = slot == 0 ? 0 : (uint64_t)1 << slot;
	*high = slot >= 63 ? UINT64_MAX : ((uint64_t)1 << (slot + 1)) - 1;
}

static uint64_t largest_slot(const uint64_t *slots, int last)
{
	uint64_t largest = 0;

	for (int i = 0; i <= last; i++)
		if (slots[i] > largest)
			largest = slots[i];
	return largest;
}

/* trace_helpers.c's print_log2_hist. */
static void put_log2_text(struct strbuf *sb, const char *unit, const uint64_t *slots, int last)
{
	bool narrow = last <= 32;
	int width = narrow ? 10 : 20;
	uint64_t largest = largest_slot(slots, last);

	strbuf_printf(sb, "%*s%-*s : count    distribution\n", narrow ? 5 : 15, "", narrow ? 19 : 29,
		      unit);
	for (int i = 0; i <= last; i++) {
		uint64_t low, high;
		log2_bounds(i, &low, &high);
		strbuf_printf(sb, "%*llu -> %-*llu : %-8llu |", width, (unsigned long long)low, width,
			      (unsigned long long)high, (unsigned long long)slots[i]);
		put_stars(sb, slots[i], largest, narrow ? TOOLPRINT_STARS : TOOLPRINT_STARS / 2);
		strbuf_puts(sb, "|\n");
	}
}

/* trace_helpers.c's print_linear_hist: only the non-empty slots. */
static void put_linear_text(struct strbuf *sb, const char *unit, const struct type *type,
			    const uint64_t *slots, int last)
{
	uint64_t largest = largest_slot(slots, last);

	strbuf_printf(sb, "     %-13s : count     distribution\n", unit);
	for (int i = 0; i <= last; i++) {
		if (!slots[i])
			continue;
		strbuf_printf(sb, "        %-10lld : %-8llu |",
			      (long long)linear_low(type, i),
			      (unsigned long long)slots[i]);
		put_stars(sb, slots[i], largest, TOOLPRINT_STARS);
		strbuf_puts(sb, "|\n");
	}
}

/* {"low": .., "high": .., "count": ..} for every slot the text shows. */
static void put_buckets_json(struct strbuf *sb, const struct type *type, bool is_log2,
			     const uint64_t *slots, int last, int slot_count)
{
	bool any = false;

	strbuf_puts(sb, "\"buckets\": [");
	for (int i = 0; i <= last; i++) {
		if (!is_log2 && !slots[i])
			continue;
		if (any)
			strbuf_puts(sb, ", ");
		any = true;
		if (is_log2) {
			uint64_t low, high;
			log2_bounds(i, &low, &high);
			strbuf_printf(sb, "{\"low\": %llu, \"high\": %llu, ", (unsigned long long)low,
				      (unsigned long long)high);
		} else {
			strbuf_printf(sb, "{\"low\": %lld, ", (long long)linear_low(type, i));
			/* the last slot also holds everything above max */
			if (i < slot_count - 1)
				strbuf_printf(sb, "\"high\": %lld, ",
					      (long long)(linear_low(type, i + 1) - 1));
		}
		strbuf_printf(sb, "\"count\": %llu}", (unsigned long long)slots[i]);
	}
	strbuf_puts(sb, "]");
}

/* The slots as heat map buckets: [low, high + 1); the linear histogram's
 * last slot, which also holds everything above max, as one step wide. */
static void add_heatmap_buckets(struct picture *picture, const struct type *type, bool is_log2,
				const uint64_t *slots, int last)
{
	for (int i = 0; i <= last; i++) {
		if (is_log2) {
			uint64_t low, high;
			log2_bounds(i, &low, &high);
			picture_heatmap_add(picture, (int64_t)low, (int64_t)high + 1, slots[i]);
		} else {
			int64_t low = linear_low(type, i);
			picture_heatmap_add(picture, low, low + linear_step(type), slots[i]);
		}
	}
}

struct key_order {
	const struct map_desc *map;
	int key_bytes;
};

static int compare_keys_ascending(const void *pa, const void *pb, void *arg)
{
	const struct print_entry *a = pa;
	const struct print_entry *b = pb;
	const struct key_order *how = arg;
	int c = snapshot_compare_keys(how->map->key_type, a->key, b->key);

	if (c)
		return c;
	c = memcmp(a->key, b->key, how->key_bytes);
	return c < 0 ? -1 : c > 0;
}

int print_tool_histograms(const struct output *out, const struct map_desc *map,
			  const struct event_desc *event)
{
	const struct type *type = map->value_type;
	bool is_log2 = event->kind == EVENT_PRINT_LOG2_HIST;
	bool keyed = map->key_type && map->bpf_map_type != BPF_MAP_TYPE_PERCPU_ARRAY;
	struct map_snapshot snap;
	struct print_entry *groups;
	int err = snapshot_read(map, &snap);

	if (err)
		return err;
	if (!type || type->aggregation != (is_log2 ? &aggregation_hist : &aggregation_lhist)) {
		snapshot_free(&snap);
		return -EINVAL;
	}
	int group_count = snapshot_histograms(map, &snap, &groups);
	struct key_order how = { map, keyed ? snapshot_user_key_size(map) : 0 };
	qsort_r(groups, group_count, sizeof(*groups), compare_keys_ascending, &how);

	int slot_count = is_log2 ? TOOLPRINT_LOG2_SLOTS
				 : type->aggregation->bucket_count(type) - 1;
	uint64_t *slots = xcalloc(slot_count, sizeof(*slots));
	struct picture *heatmap = out->picture && out->picture->request.kind == PICTURE_HEATMAP
					  ? out->picture : NULL;
	if (heatmap)
		picture_heatmap_begin(heatmap, event->unit);
	struct strbuf sb;
	strbuf_init(&sb);
	for (int i = 0; i < group_count; i++) {
		int last = is_log2 ? log2_slots(type, &groups[i], slots)
				   : linear_slots(type, &groups[i], slots, slot_count);
		if (last < 0)
			continue;
		if (heatmap)
			add_heatmap_buckets(heatmap, type, is_log2, slots, last);
		unsigned char *row = keyed ? row_with_key(event, map, groups[i].key)
					   : xcalloc(1, 8); /* a keyless map's label has no fields */
		if (out->json) {
			strbuf_puts(&sb, "{\"unit\": ");
			format_json_string(&sb, event->unit, strlen(event->unit));
			if (row && event->arg_count) {
				strbuf_puts(&sb, ", ");
				format_json_fields(&sb, event, row);
			}
			strbuf_puts(&sb, ", ");
			put_buckets_json(&sb, type, is_log2, slots, last, slot_count);
			strbuf_puts(&sb, "}\n");
		} else {
			if (row)
				format_event(&sb, event, row);
			if (is_log2)
				put_log2_text(&sb, event->unit, slots, last);
			else
				put_linear_text(&sb, event->unit, type, slots, last);
			strbuf_puts(&sb, event->trailer ? event->trailer : "");
		}
		free(row);
	}
	put_output(out, &sb);
	if (heatmap)
		picture_heatmap_end(heatmap);
	free(slots);
	snapshot_histograms_free(groups, group_count);
	snapshot_free(&snap);
	return 0;
}

/* ---- top-N tables ---- */

struct top_order {
	const struct map_desc *map;
	int key_bytes;
	bool value_signed;
};

/* Largest value first; equal values by ascending key. */
static int compare_rows(const void *pa, const void *pb, void *arg)
{
	const struct print_entry *a = pa;
	const struct print_entry *b = pb;
	const struct top_order *how = arg;

	if (a->order != b->order) {
		if (how->value_signed)
			return (int64_t)a->order > (int64_t)b->order ? -1 : 1;
		return a->order > b->order ? -1 : 1;
	}
	struct key_order keys = { how->map, how->key_bytes };
	return compare_keys_ascending(pa, pb, &keys);
}

/* A further column's map: its entries sorted by key bytes, for lookups. */
struct column_map {
	const struct map_desc *map;
	struct map_snapshot snap;
	const unsigned char **keys;
	int key_bytes;
};

static int compare_key_bytes(const void *pa, const void *pb, void *arg)
{
	const unsigned char *const *a = pa;
	const unsigned char *const *b = pb;
	int c = memcmp(*a, *b, *(const int *)arg);

	return c < 0 ? -1 : c > 0;
}

static uint64_t column_value(const struct column_map *column, const unsigned char *key)
{
	int low = 0, high = column->snap.count - 1;

	while (low <= high) {
		int middle = (low + high) / 2;
		const unsigned char *found = column->keys[middle];
		int c = memcmp(key, found, column->key_bytes);
		if (c == 0) {
			int index = (int)((found - column->snap.keys) / column->snap.key_size);
			return snapshot_fold(&column->snap, column->map->value_type,
					     snapshot_value(&column->snap, index));
		}
		if (c < 0)
			high = middle - 1;
		else
			low = middle + 1;
	}
	return 0;
}

int print_tool_top(const struct output *out, const struct program *program,
		   const struct event_desc *event)
{
	const struct map_desc *map = &program->maps.items[event->map_id];
	struct map_snapshot snap;
	int err = snapshot_read(map, &snap);

	if (err)
		return err;
	int key_bytes = snapshot_user_key_size(map);
	struct column_map *columns = xcalloc(event->extra_map_count + 1, sizeof(*columns));
	for (int i = 0; i < event->extra_map_count; i++) {
		struct column_map *column = &columns[i];
		column->map = &program->maps.items[event->extra_map_ids[i]];
		column->key_bytes = key_bytes;
		if (snapshot_read(column->map, &column->snap) < 0)
			memset(&column->snap, 0, sizeof(column->snap));
		column->keys = xcalloc(column->snap.count + 1, sizeof(*column->keys));
		for (int j = 0; j < column->snap.count; j++)
			column->keys[j] = snapshot_key(&column->snap, j);
		qsort_r(column->keys, column->snap.count, sizeof(*column->keys), compare_key_bytes,
			&column->key_bytes);
	}

	struct print_entry *rows = xcalloc(snap.count + 1, sizeof(*rows));
	for (int i = 0; i < snap.count; i++) {
		rows[i].key = snapshot_key(&snap, i);
		rows[i].order = snapshot_fold(&snap, map->value_type, snapshot_value(&snap, i));
	}
	struct top_order how = { map, key_bytes,
				 map->value_type->is_signed };
	qsort_r(rows, snap.count, sizeof(*rows), compare_rows, &how);

	int shown = event->top > 0 && event->top < snap.count ? event->top : snap.count;
	/* the first map's value column, or where it would be when it only orders */
	int value_arg = event->arg_count - 1 - event->extra_map_count + event->top_order_only;
	struct strbuf sb;
	strbuf_init(&sb);
	for (int i = 0; i < shown && value_arg >= 0; i++) {
		unsigned char *row = row_with_key(event, map, rows[i].key);
		if (!event->top_order_only)
			memcpy(row + event->args[value_arg].offset, &rows[i].order, sizeof(uint64_t));
		for (int j = 0; j < event->extra_map_count; j++) {
			uint64_t value = column_value(&columns[j], rows[i].key);
			memcpy(row + event->args[value_arg + 1 + j - event->top_order_only].offset,
			       &value, sizeof(value));
		}
		if (out->json) {
			strbuf_putc(&sb, '{');
			format_json_fields(&sb, event, row);
			strbuf_puts(&sb, "}\n");
		} else {
			format_event(&sb, event, row);
		}
		free(row);
	}
	put_output(out, &sb);
	free(rows);
	for (int i = 0; i < event->extra_map_count; i++) {
		free(columns[i].keys);
		snapshot_free(&columns[i].snap);
	}
	free(columns);
	snapshot_free(&snap);
	return 0;
}
