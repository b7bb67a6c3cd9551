/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hist(x[, k]): a power-of-two histogram, each power split in 2^k linear
 * parts. Keys carry the bucket number after the user key (program.h has
 * the numbering); each bucket's count is a u64 per CPU, summed. Under sonde
 * serve a bucket is { count, sum } (summed_value_size): the sum of the
 * values that fell in it makes the exported histogram's _sum exact.
 */
#include "aggregation.h"

#include "../compiler/codegen_internal.h"
#include "../compiler/sema_internal.h"
#include "../runtime/snapshot.h"
#include "../serve/metrics.h"

/* The type's one parameter (aggregation_params): k, the bits. */
#define HIST_BITS(type) ((type)->aggregation_params[0])

static void check_hist(struct sema *sema, struct node *call)
{
	aggregation_check_arg(sema, call, call->args);
	struct type *type = type_aggregation(&aggregation_hist, true);
	struct node *bits = call->args->next;
	if (bits) {
		sema_check_expr(sema, bits);
		if (!sema_is_int_constant(bits) || bits->const_value > 5)
			sema_error(sema, bits->loc, "hist()'s second argument must be a constant from 0 to 5");
		else
			HIST_BITS(type) = (int)bits->const_value;
	}
	call->type = type;
}

/* Bucket number of a hist() value, as program.h defines it:
 * 0 negative, 1 zero, else 2 + (floor(log2 v) << k) + k-bit sub-bucket. */
static int gen_hist_bucket(struct codegen *gen, int value, int bits)
{
	int bucket = gen_const_reg(gen, 0);
	int done = ir_new_label(&gen->fn), positive = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JSLT, value, 0, done);
	ir_mov_imm(&gen->fn, bucket, 1);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, value, 0, done);
	ir_label(&gen->fn, positive);
	/* log2 by binary search over 32, 16, 8, 4, 2, 1 */
	int log = gen_const_reg(gen, 0), rest = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, rest, value);
	for (int shift = 32; shift >= 1; shift /= 2) {
		int skip = ir_new_label(&gen->fn);
		if (shift == 32) {
			/* 2^32 - 1 does not fit a (sign-extended) 32-bit immediate */
			int high = ir_new_vreg(&gen->fn);
			ir_mov(&gen->fn, high, rest);
			ir_alu_imm(&gen->fn, BPF_RSH, high, 32);
			ir_jump_if_imm(&gen->fn, BPF_JEQ, high, 0, skip);
			ir_mov(&gen->fn, rest, high);
		} else {
			ir_jump_if_imm(&gen->fn, BPF_JLE, rest, (1 << shift) - 1, skip);
			ir_alu_imm(&gen->fn, BPF_RSH, rest, shift);
		}
		ir_alu_imm(&gen->fn, BPF_ADD, log, shift);
		ir_label(&gen->fn, skip);
	}
	ir_mov(&gen->fn, bucket, log);
	if (bits > 0) {
		/* sub-bucket s = ((v - 2^l) << k) >> l */
		ir_alu_imm(&gen->fn, BPF_LSH, bucket, bits);
		int sub = ir_new_vreg(&gen->fn), power = gen_const_reg(gen, 1);
		ir_alu(&gen->fn, BPF_LSH, power, log);
		ir_mov(&gen->fn, sub, value);
		ir_alu(&gen->fn, BPF_SUB, sub, power);
		ir_alu_imm(&gen->fn, BPF_LSH, sub, bits);
		ir_alu(&gen->fn, BPF_RSH, sub, log);
		ir_alu(&gen->fn, BPF_ADD, bucket, sub);
	}
	ir_alu_imm(&gen->fn, BPF_ADD, bucket, 2);
	ir_label(&gen->fn, done);
	return bucket;
}

static struct value generate_hist(struct codegen *gen, struct node *call)
{
	int value = gen_value_to_reg(gen, gen_expr(gen, call->args));
	int bits = HIST_BITS(gen->program->maps.items[gen->assign_target->map_id].value_type);
	int bucket = gen_hist_bucket(gen, value, bits);
	struct aggregation_site site = aggregation_begin(gen, bucket);
	aggregation_add_to_bucket(gen, &site, value);
	return value_none();
}

static int hist_bucket_count(const struct type *type)
{
	return 2 + (64 << HIST_BITS(type));
}

/*
 * Where a log2 bucket starts and how wide it is (see program.h for the
 * numbering). Sub-buckets below 2^k that no value can reach are
 * reported as unreachable and never drawn.
 */
struct hist_bucket {
	bool reachable;
	int log2;      /* l: the bucket lies in [2^l, 2^(l+1)) */
	int sub;       /* s: which of the 2^k parts */
	uint64_t low;  /* first value in the bucket */
	uint64_t high; /* last value in the bucket */
};

static struct hist_bucket hist_bucket(int index, int bits)
{
	struct hist_bucket bucket = { 0 };
	int parts = 1 << bits;

	if (index < 2)
		return bucket;
	bucket.log2 = (index - 2) >> bits;
	bucket.sub = (index - 2) & (parts - 1);
	int l = bucket.log2;
	if (l > 63)
		return bucket;
	if (l >= bits) {
		bucket.low = ((uint64_t)parts + bucket.sub) << (l - bits);
		bucket.high = bucket.low + ((uint64_t)1 << (l - bits)) - 1;
	} else {
		if (bucket.sub & ((1 << (bits - l)) - 1))
			return bucket;
		bucket.low = ((uint64_t)1 << l) + ((uint64_t)bucket.sub >> (bits - l));
		bucket.high = bucket.low;
	}
	bucket.reachable = true;
	return bucket;
}

/*
 * A bucket boundary, (2^k + s) * 2^(l-k), written with the suffix of the
 * largest power of 1024 in 2^(l-k): 512, 1K, 24K, 8G, 16E.
 */
static void put_hist_bound(struct strbuf *sb, int l, int s, int bits)
{
	if (s == (1 << bits)) {
		l++;
		s = 0;
	}
	int power = l - bits;
	int decade = power / 10;
	uint64_t mantissa = ((uint64_t)(1 << bits) + s) << (power - 10 * decade);

	strbuf_printf(sb, "%llu", (unsigned long long)mantissa);
	if (decade)
		strbuf_putc(sb, "\0KMGTPE"[decade]);
}

static void put_hist_label(struct strbuf *sb, int index, int bits)
{
	if (index == 0) {
		strbuf_puts(sb, "(..., 0)");
		return;
	}
	if (index == 1) {
		strbuf_puts(sb, "[0]");
		return;
	}
	struct hist_bucket bucket = hist_bucket(index, bits);
	if (bucket.low == bucket.high) {
		strbuf_printf(sb, "[%llu]", (unsigned long long)bucket.low);
		return;
	}
	strbuf_putc(sb, '[');
	put_hist_bound(sb, bucket.log2, bucket.sub, bits);
	strbuf_puts(sb, ", ");
	put_hist_bound(sb, bucket.log2, bucket.sub + 1, bits);
	strbuf_putc(sb, ')');
}

static void put_hist_json_bounds(struct strbuf *sb, int index, int bits)
{
	if (index == 0) {
		strbuf_puts(sb, "\"max\": -1, ");
		return;
	}
	if (index == 1) {
		strbuf_puts(sb, "\"min\": 0, \"max\": 0, ");
		return;
	}
	struct hist_bucket bucket = hist_bucket(index, bits);
	strbuf_printf(sb, "\"min\": %llu, \"max\": %llu, ", (unsigned long long)bucket.low,
		      (unsigned long long)bucket.high);
}

static void put_bucket_label(struct strbuf *sb, const struct type *type, int index)
{
	put_hist_label(sb, index, HIST_BITS(type));
}

static void put_bucket_bounds(struct strbuf *sb, const struct type *type, int index)
{
	put_hist_json_bounds(sb, index, HIST_BITS(type));
}

static bool bucket_is_drawn(const struct type *type, int index)
{
	return index < 2 || hist_bucket(index, HIST_BITS(type)).reachable;
}

/* Values are integers: [1024, 2048) holds at most 2047. */
static bool put_bucket_upper(struct strbuf *sb, const struct type *type, int index)
{
	if (index < 2) {
		strbuf_puts(sb, index == 0 ? "-1" : "0");
		return true;
	}
	struct hist_bucket bucket = hist_bucket(index, HIST_BITS(type));
	if (!bucket.reachable)
		return false;
	strbuf_printf(sb, "%llu", (unsigned long long)bucket.high);
	return true;
}

/* Bucket 1 holds 0 alone. */
static bool bucket_low(const struct type *type, int index, int64_t *low)
{
	struct hist_bucket bucket = hist_bucket(index, HIST_BITS(type));

	*low = (int64_t)bucket.low;
	return index == 1 || bucket.reachable;
}

/* up to the highest bucket hit: 2 + 64 * 2^k buckets would be mostly empty */
static void put_hist_metrics(struct metric_writer *out, const struct map_snapshot *snap)
{
	metrics_put_histograms(out, snap, false);
}

const struct aggregation aggregation_hist = {
	.function = { FUNCTION(hist, 1, 2), .is_aggregation = true },
	.value_size = 8,
	.is_bucketed = true,
	.summed_value_size = 16,
	.bucket_count = hist_bucket_count,
	.fold = aggregation_fold_total,
	.print = print_map_histograms,
	.put_bucket_label = put_bucket_label,
	.put_bucket_bounds = put_bucket_bounds,
	.bucket_is_drawn = bucket_is_drawn,
	.put_bucket_upper = put_bucket_upper,
	.bucket_low = bucket_low,
	.metric_type = &metric_histogram,
	.put_metrics = put_hist_metrics,
};
