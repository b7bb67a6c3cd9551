/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tseries(x, interval, intervals[, how]): a time series, as current
 * bpftrace has it. Wall-clock time is cut into intervals of `interval`
 * nanoseconds; the map keeps the last `intervals` of them, each holding the
 * values x took in it combined `how`: the last one (the default), "avg",
 * "max", "min", "sum", or "count" (how many there were).
 *
 * Storage: the interval number (the epoch, wall-clock ns / interval) picks
 * a slot, epoch % intervals, carried in the key as hist's bucket is. Each
 * CPU's copy of a slot is { s64 value; u64 mark; u64 epoch; }: an event
 * whose epoch differs from the slot's starts the slot afresh, so a slot
 * only ever holds its newest interval and old ones fall away without any
 * clean-up. `mark` is 0 while a slot holds nothing, the number of values for
 * avg (and the others), and for the default the time of the last value, so
 * that folding the CPUs keeps the latest of them.
 *
 * Printing folds the CPUs' copies of each slot (those with the newest
 * epoch), takes the newest epoch of the whole map as the end of the series,
 * and draws each key's intervals from its first one with a value (text: a
 * graph, a point per interval; JSON: interval_start and value).
 */
#include "aggregation.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../compiler/codegen_internal.h"
#include "../compiler/sema_internal.h"
#include "../runtime/snapshot.h"

/* The type's parameters (aggregation_params): nanoseconds per interval,
 * intervals kept, and how the values of one interval combine. */
#define TSERIES_INTERVAL(type) ((type)->aggregation_params[0])
#define TSERIES_INTERVALS(type) ((type)->aggregation_params[1])
#define TSERIES_MODE(type) ((type)->aggregation_params[2])

/* how the values of one interval combine */
enum tseries_mode {
	TSERIES_LAST,  /* the latest value */
	TSERIES_AVG,   /* their mean */
	TSERIES_MAX,
	TSERIES_MIN,
	TSERIES_SUM,
	TSERIES_COUNT, /* how many values there were */
};

static const char *const mode_names[] = { "", "avg", "max", "min", "sum", "count" };

/* The most intervals a series keeps: each is a map entry per key. */
#define TSERIES_MAX_INTERVALS 1000

/* A slot as each CPU stores it. */
struct tseries_slot {
	int64_t value;
	uint64_t mark;
	uint64_t epoch;
};

static void check_tseries(struct sema *sema, struct node *call)
{
	struct node *interval = call->args->next, *intervals = interval->next, *how = intervals->next;
	bool is_signed = true;

	aggregation_check_arg(sema, call, call->args);
	if (call->args->type && call->args->type->kind == TYPE_INT)
		is_signed = call->args->type->is_signed || call->args->type->size < 8;
	struct type *type = type_aggregation(&aggregation_tseries, is_signed);
	call->type = type_none();
	sema_check_expr(sema, interval);
	sema_check_expr(sema, intervals);
	if (!sema_is_int_constant(interval) || (int64_t)interval->const_value <= 0) {
		sema_error(sema, interval->loc, "tseries()'s interval must be a positive constant "
			   "number of nanoseconds (e.g. 100ms)");
		return;
	}
	if (!sema_is_int_constant(intervals) || (int64_t)intervals->const_value < 1 ||
	    intervals->const_value > TSERIES_MAX_INTERVALS) {
		sema_error(sema, intervals->loc, "tseries()'s number of intervals must be a constant "
			   "from 1 to %d", TSERIES_MAX_INTERVALS);
		return;
	}
	TSERIES_INTERVAL(type) = (int64_t)interval->const_value;
	TSERIES_INTERVALS(type) = (int)intervals->const_value;
	TSERIES_MODE(type) = TSERIES_LAST;
	if (how) {
		sema_check_expr(sema, how);
		int mode = TSERIES_AVG;
		while (how->kind == NODE_STRING && mode <= TSERIES_COUNT &&
		       strcmp(how->string_value, mode_names[mode]) != 0)
			mode++;
		if (how->kind != NODE_STRING || mode > TSERIES_COUNT) {
			sema_error(sema, how->loc, "tseries()'s aggregation must be \"avg\", \"max\", "
				   "\"min\", \"sum\" or \"count\"");
			return;
		}
		TSERIES_MODE(type) = mode;
	}
	call->type = type;
}

/* the config map's wall-clock offset (run.c writes it before attaching) */
static int wall_clock_now(struct codegen *gen)
{
	int offset = gen_config_load(gen, (int)offsetof(struct program_config, wall_offset_ns));
	int now = gen_helper_value(gen, BPF_FUNC_ktime_get_boot_ns);
	ir_alu(&gen->fn, BPF_ADD, now, offset);
	return now;
}

/* Folds `value` (a register) into the slot at `pointer`, whose interval
 * is the event's. */
static void combine(struct codegen *gen, int mode, bool is_signed, int pointer, int value, int now)
{
	int current = ir_new_vreg(&gen->fn), mark = ir_new_vreg(&gen->fn);
	int keep = ir_new_label(&gen->fn);
	ir_load(&gen->fn, 8, current, pointer, 0);
	ir_load(&gen->fn, 8, mark, pointer, 8);
	switch (mode) {
	case TSERIES_LAST:
		ir_store(&gen->fn, 8, pointer, 0, value);
		ir_store(&gen->fn, 8, pointer, 8, now);
		return;
	case TSERIES_AVG:
	case TSERIES_SUM:
		ir_alu(&gen->fn, BPF_ADD, current, value);
		break;
	case TSERIES_COUNT:
		ir_alu_imm(&gen->fn, BPF_ADD, current, 1);
		break;
	case TSERIES_MAX:
	case TSERIES_MIN: {
		int op = mode == TSERIES_MAX ? (is_signed ? BPF_JSGE : BPF_JGE)
					     : (is_signed ? BPF_JSLE : BPF_JLE);
		ir_jump_if(&gen->fn, op, current, value, keep);
		ir_mov(&gen->fn, current, value);
		break;
	}
	}
	ir_label(&gen->fn, keep);
	ir_store(&gen->fn, 8, pointer, 0, current);
	ir_alu_imm(&gen->fn, BPF_ADD, mark, 1);
	ir_store(&gen->fn, 8, pointer, 8, mark);
}

/* A slot's first value of its interval: (value, mark) from scratch. */
static void start_values(struct codegen *gen, int mode, int value, int now, int *first, int *mark)
{
	*first = value;
	if (mode == TSERIES_COUNT)
		*first = gen_const_reg(gen, 1);
	*mark = mode == TSERIES_LAST ? now : gen_const_reg(gen, 1);
}

static struct value generate_tseries(struct codegen *gen, struct node *call)
{
	int value = gen_value_to_reg(gen, gen_expr(gen, call->args));
	const struct type *type = gen->program->maps.items[gen->assign_target->map_id].value_type;
	int mode = TSERIES_MODE(type);
	int now = wall_clock_now(gen);
	int epoch = ir_new_vreg(&gen->fn), slot = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, epoch, now);
	ir_alu(&gen->fn, BPF_DIV, epoch, gen_const_reg(gen, TSERIES_INTERVAL(type)));
	ir_mov(&gen->fn, slot, epoch);
	ir_alu(&gen->fn, BPF_MOD, slot, gen_const_reg(gen, TSERIES_INTERVALS(type)));

	struct aggregation_site site = aggregation_begin(gen, slot);
	int missing = ir_new_label(&gen->fn), restart = ir_new_label(&gen->fn);
	int done = ir_new_label(&gen->fn);
	int first, mark;
	ir_jump_if_imm(&gen->fn, BPF_JEQ, site.pointer, 0, missing);
	int stored = ir_new_vreg(&gen->fn);
	ir_load(&gen->fn, 8, stored, site.pointer, 16);
	ir_jump_if(&gen->fn, BPF_JNE, stored, epoch, restart);
	ir_load(&gen->fn, 8, stored, site.pointer, 8);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, stored, 0, restart);
	combine(gen, mode, site.map->value_type->is_signed, site.pointer, value, now);
	ir_jump(&gen->fn, done);

	/* the slot still holds an older interval (or nothing): it starts anew */
	ir_label(&gen->fn, restart);
	start_values(gen, mode, value, now, &first, &mark);
	ir_store(&gen->fn, 8, site.pointer, 0, first);
	ir_store(&gen->fn, 8, site.pointer, 8, mark);
	ir_store(&gen->fn, 8, site.pointer, 16, epoch);
	ir_jump(&gen->fn, done);

	ir_label(&gen->fn, missing);
	int fresh = gen_stack_alloc(gen, (int)sizeof(struct tseries_slot));
	start_values(gen, mode, value, now, &first, &mark);
	ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)fresh, first);
	ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)(fresh + 8), mark);
	ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)(fresh + 16), epoch);
	gen_map_update(gen, site.map->id, site.key, fresh);
	ir_label(&gen->fn, done);
	return value_none();
}

static int tseries_bucket_count(const struct type *type)
{
	return TSERIES_INTERVALS(type);
}

/* ---- printing ---- */

/* One slot with the CPUs folded. */
struct folded_slot {
	bool is_set;
	uint64_t epoch;
	int64_t value;
};

/* One key's series: its slots, indexed by epoch % intervals. */
struct series {
	const unsigned char *key;
	struct folded_slot *slots;
};

static bool before(int64_t a, int64_t b, bool is_signed)
{
	return is_signed ? a < b : (uint64_t)a < (uint64_t)b;
}

/* The CPUs' copies of a slot: those of the newest interval, combined. */
static struct folded_slot fold_slot(const struct map_snapshot *snap, const unsigned char *value,
				    int mode, bool is_signed)
{
	struct folded_slot out = { 0 };
	uint64_t marks = 0, latest = 0;

	for (int cpu = 0; cpu < snap->ncpus; cpu++) {
		struct tseries_slot slot;
		memcpy(&slot, value + (size_t)cpu * snap->value_stride, sizeof(slot));
		if (!slot.mark)
			continue;
		if (out.is_set && slot.epoch < out.epoch)
			continue;
		if (!out.is_set || slot.epoch > out.epoch) {
			out = (struct folded_slot){ true, slot.epoch, slot.value };
			marks = latest = slot.mark;
			continue;
		}
		switch (mode) {
		case TSERIES_LAST:
			if (slot.mark > latest) {
				latest = slot.mark;
				out.value = slot.value;
			}
			break;
		case TSERIES_MAX:
			if (before(out.value, slot.value, is_signed))
				out.value = slot.value;
			break;
		case TSERIES_MIN:
			if (before(slot.value, out.value, is_signed))
				out.value = slot.value;
			break;
		default: /* avg, sum, count */
			out.value = (int64_t)((uint64_t)out.value + (uint64_t)slot.value);
			marks += slot.mark;
			break;
		}
	}
	if (out.is_set && mode == TSERIES_AVG && marks)
		out.value = is_signed ? out.value / (int64_t)marks
				      : (int64_t)((uint64_t)out.value / marks);
	return out;
}

static int compare_series(const void *pa, const void *pb, void *arg)
{
	const struct series *a = pa, *b = pb;
	const struct map_desc *map = arg;
	int c = snapshot_compare_keys(map->key_type, a->key, b->key);

	if (c)
		return c;
	c = memcmp(a->key, b->key, (size_t)snapshot_user_key_size(map));
	return c < 0 ? -1 : c > 0;
}

/* Groups the (key, slot) entries by key; *newest is the newest epoch of
 * the whole map (0 and no slot set when nothing was recorded). */
static int collect_series(const struct map_desc *map, const struct map_snapshot *snap,
			  struct series **out, uint64_t *newest, bool *any)
{
	const struct type *type = map->value_type;
	bool is_array = map->bpf_map_type == BPF_MAP_TYPE_PERCPU_ARRAY;
	int key_bytes = is_array ? 0 : snapshot_user_key_size(map);
	int intervals = TSERIES_INTERVALS(type);
	struct series *all = xcalloc((size_t)snap->count + 1, sizeof(*all));
	int count = 0;

	*newest = 0;
	*any = false;
	for (int i = 0; i < snap->count; i++) {
		const unsigned char *key = snapshot_key(snap, i);
		uint64_t slot = 0;
		if (is_array) {
			uint32_t index;
			memcpy(&index, key, sizeof(index));
			slot = index;
		} else {
			memcpy(&slot, key + key_bytes, sizeof(slot));
		}
		if (slot >= (uint64_t)intervals)
			continue;
		struct folded_slot folded = fold_slot(snap, snapshot_value(snap, i), TSERIES_MODE(type),
						      type->is_signed);
		int at = 0;
		while (at < count && memcmp(all[at].key, key, (size_t)key_bytes) != 0)
			at++;
		if (at == count) {
			all[count].key = key;
			all[count].slots = xcalloc((size_t)intervals, sizeof(struct folded_slot));
			count++;
		}
		all[at].slots[slot] = folded;
		if (folded.is_set && (!*any || folded.epoch > *newest)) {
			*newest = folded.epoch;
			*any = true;
		}
	}
	/* a map without keys is shown even before its first value */
	if (count == 0 && !map->key_type) {
		static const unsigned char no_key[8];
		all[0].key = no_key;
		all[0].slots = xcalloc((size_t)intervals, sizeof(struct folded_slot));
		count = 1;
	}
	if (map->key_type)
		qsort_r(all, (size_t)count, sizeof(*all), compare_series, (void *)map);
	*out = all;
	return count;
}

/* The value of interval `epoch` in a series, if it has one. */
static const struct folded_slot *value_at(const struct series *series, const struct type *type,
					  uint64_t epoch)
{
	const struct folded_slot *slot = &series->slots[epoch % (uint64_t)TSERIES_INTERVALS(type)];
	return slot->is_set && slot->epoch == epoch ? slot : NULL;
}

/* The fraction of a second the times show: as fine as the interval needs. */
static int fraction_digits(int64_t interval)
{
	if (interval % 1000000000 == 0)
		return 0;
	if (interval % 1000000 == 0)
		return 3;
	if (interval % 1000 == 0)
		return 6;
	return 9;
}

static void put_time(struct strbuf *sb, uint64_t wall_ns, const char *format, int digits)
{
	time_t seconds = (time_t)(wall_ns / 1000000000ull);
	uint64_t fraction = wall_ns % 1000000000ull;
	struct tm local;
	char text[64];

	localtime_r(&seconds, &local);
	strftime(text, sizeof(text), format, &local);
	strbuf_puts(sb, text);
	for (int i = digits; i < 9; i++)
		fraction /= 10;
	if (digits)
		strbuf_printf(sb, ".%0*llu", digits, (unsigned long long)fraction);
}

static void put_number(struct strbuf *sb, int64_t value, bool is_signed)
{
	if (is_signed)
		strbuf_printf(sb, "%lld", (long long)value);
	else
		strbuf_printf(sb, "%llu", (unsigned long long)value);
}

/* The graph's width in characters, its ends included. */
#define GRAPH_WIDTH 53
/* The width the lowest value's label takes under the graph. */
#define LABEL_WIDTH 21

static void put_bounds(struct strbuf *sb, int indent, int64_t low, int64_t high, bool is_signed)
{
	struct strbuf number;

	strbuf_init(&number);
	put_number(&number, low, is_signed);
	strbuf_printf(sb, "%*s%-*s", indent, "", LABEL_WIDTH, number.data);
	strbuf_reset(&number);
	put_number(&number, high, is_signed);
	strbuf_printf(sb, "%*s\n", GRAPH_WIDTH - LABEL_WIDTH, number.data);
	strbuf_free(&number);
}

/* Where on the graph `value` falls between low and high. */
static int graph_column(int64_t value, int64_t low, int64_t high, bool is_signed, int width)
{
	double span = is_signed ? (double)high - (double)low : (double)(uint64_t)high - (double)(uint64_t)low;
	double from_low = is_signed ? (double)value - (double)low
				    : (double)(uint64_t)value - (double)(uint64_t)low;
	if (span <= 0)
		return (GRAPH_WIDTH) / 2;
	int column = (int)((double)width * from_low / span);
	return column < 0 ? 0 : column > GRAPH_WIDTH - 1 ? GRAPH_WIDTH - 1 : column;
}

static void put_graph(struct strbuf *sb, const struct type *type, const struct series *series,
		      uint64_t first, uint64_t last)
{
	bool is_signed = type->is_signed;
	int digits = fraction_digits(TSERIES_INTERVAL(type));
	uint64_t interval = (uint64_t)TSERIES_INTERVAL(type);
	int time_width = 8 + (digits ? digits + 1 : 0);
	const char *units = digits == 3 ? ".mmm" : digits == 6 ? ".uuuuuu" : digits == 9 ? ".nnnnnnnnn" : "";
	int64_t low = 0, high = 0;
	bool have = false;

	for (uint64_t epoch = first; epoch <= last; epoch++) {
		const struct folded_slot *slot = value_at(series, type, epoch);
		if (!slot)
			continue;
		if (!have || before(slot->value, low, is_signed))
			low = slot->value;
		if (!have || before(high, slot->value, is_signed))
			high = slot->value;
		have = true;
	}
	/* one value alone: a margin on each side, within the type's range */
	if (low == high) {
		if (is_signed ? low > INT64_MIN : low != 0)
			low--;
		if (is_signed ? high < INT64_MAX : (uint64_t)high != UINT64_MAX)
			high++;
	}
	strbuf_printf(sb, "hh:mm:ss%-*s ", time_width - 8 + 1, units);
	for (int i = 0; i < GRAPH_WIDTH - 2; i++)
		strbuf_putc(sb, '_');
	strbuf_putc(sb, '\n');

	int zero = 0;
	if (is_signed && low < 0 && high > 0)
		zero = graph_column(0, low, high, true, GRAPH_WIDTH);
	for (uint64_t epoch = first; epoch <= last; epoch++) {
		char line[GRAPH_WIDTH + 1];
		const struct folded_slot *slot = value_at(series, type, epoch);
		memset(line, ' ', GRAPH_WIDTH);
		line[GRAPH_WIDTH] = '\0';
		line[0] = line[GRAPH_WIDTH - 1] = '|';
		if (zero > 0)
			line[zero] = '.';
		put_time(sb, epoch * interval, "%H:%M:%S", digits);
		strbuf_putc(sb, ' ');
		if (!slot) {
			strbuf_printf(sb, "%s -\n", line);
			continue;
		}
		line[graph_column(slot->value, low, high, is_signed, GRAPH_WIDTH - 1)] = 'o';
		strbuf_printf(sb, "%s ", line);
		put_number(sb, slot->value, is_signed);
		strbuf_putc(sb, '\n');
	}
	strbuf_printf(sb, "%*s v", time_width, "");
	for (int i = 0; i < GRAPH_WIDTH - 2; i++)
		strbuf_putc(sb, '_');
	strbuf_puts(sb, "v\n");
	put_bounds(sb, time_width + 1, low, high, is_signed);
}

static void put_json_series(struct strbuf *sb, const struct type *type, const struct series *series,
			    uint64_t first, uint64_t last)
{
	bool comma = false;

	strbuf_putc(sb, '[');
	for (uint64_t epoch = first; epoch <= last; epoch++) {
		const struct folded_slot *slot = value_at(series, type, epoch);
		if (!slot)
			continue;
		strbuf_puts(sb, comma ? ",{\"interval_start\":\"" : "{\"interval_start\":\"");
		put_time(sb, epoch * (uint64_t)TSERIES_INTERVAL(type), "%Y-%m-%dT%H:%M:%S", 9);
		strbuf_puts(sb, "\",\"value\":");
		put_number(sb, slot->value, type->is_signed);
		strbuf_putc(sb, '}');
		comma = true;
	}
	strbuf_putc(sb, ']');
}

static void print_tseries(struct strbuf *sb, const struct map_desc *map, const struct map_snapshot *snap,
			  int top, int div, bool json)
{
	const struct type *type = map->value_type;
	struct series *all;
	uint64_t newest;
	bool any;
	int count = collect_series(map, snap, &all, &newest, &any);
	uint64_t window = (uint64_t)TSERIES_INTERVALS(type) - 1;
	uint64_t oldest = newest > window ? newest - window : 0;

	if (json && count)
		print_json_header(sb, map, "tseries");
	for (int i = 0; i < count; i++) {
		uint64_t first = oldest;
		while (any && first <= newest && !value_at(&all[i], type, first))
			first++;
		bool empty = !any || first > newest;
		if (json) {
			if (i)
				strbuf_puts(sb, ", ");
			print_entry_start(sb, map, all[i].key, true, false);
			if (empty)
				strbuf_puts(sb, "[]");
			else
				put_json_series(sb, type, &all[i], first, newest);
			continue;
		}
		print_entry_name(sb, map, all[i].key);
		strbuf_puts(sb, ":\n");
		if (empty) {
			strbuf_puts(sb, "<no data>\n");
			continue;
		}
		put_graph(sb, type, &all[i], first, newest);
		strbuf_putc(sb, '\n');
	}
	if (json && count)
		print_json_footer(sb, map);
	for (int i = 0; i < count; i++)
		free(all[i].slots);
	free(all);
}

/* @m[k] as a number: the newest interval's value, CPUs folded */
static uint64_t fold_tseries(const struct map_snapshot *snap, const struct type *type,
			     const unsigned char *value)
{
	return (uint64_t)fold_slot(snap, value, TSERIES_MODE(type), type->is_signed).value;
}

const struct aggregation aggregation_tseries = {
	.function = { FUNCTION(tseries, 3, 4), .is_aggregation = true },
	.value_size = (int)sizeof(struct tseries_slot),
	.is_bucketed = true,
	.bucket_count = tseries_bucket_count,
	.fold = fold_tseries,
	.print = print_tseries,
};
