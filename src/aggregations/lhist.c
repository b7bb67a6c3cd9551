/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lhist(x, min, max, step): a linear histogram. Bucket 0 holds values
 * below min, the last one values from max on; keys carry the bucket number
 * after the user key, and each bucket's count is a u64 per CPU, summed
 * ({ count, sum } under sonde serve, as hist's).
 */
#include "aggregation.h"

#include "../compiler/codegen_internal.h"
#include "../compiler/sema_internal.h"
#include "../runtime/snapshot.h"
#include "../serve/metrics.h"

/* The type's parameters (aggregation_params): the call's min, max, step. */
#define LHIST_MIN(type) ((type)->aggregation_params[0])
#define LHIST_MAX(type) ((type)->aggregation_params[1])
#define LHIST_STEP(type) ((type)->aggregation_params[2])

static void check_lhist(struct sema *sema, struct node *call)
{
	aggregation_check_arg(sema, call, call->args);
	struct type *type = type_aggregation(&aggregation_lhist, true);
	struct node *min = call->args->next, *max = min->next, *step = max->next;
	const char *names[] = { "min", "max", "step" };
	struct node *params[] = { min, max, step };
	for (int i = 0; i < 3; i++) {
		sema_check_expr(sema, params[i]);
		if (!sema_is_int_constant(params[i])) {
			sema_error(sema, params[i]->loc, "lhist()'s %s must be a constant integer", names[i]);
			call->type = type_none();
			return;
		}
	}
	LHIST_MIN(type) = (int64_t)min->const_value;
	LHIST_MAX(type) = (int64_t)max->const_value;
	LHIST_STEP(type) = (int64_t)step->const_value;
	if (LHIST_MIN(type) < 0)
		/* as in bpftrace: negative ranges are not supported by lhist */
		sema_error(sema, min->loc, "lhist()'s min must be non-negative, not %lld",
			 (long long)LHIST_MIN(type));
	else if (LHIST_STEP(type) <= 0)
		sema_error(sema, step->loc, "lhist()'s step must be positive");
	else if (LHIST_MAX(type) <= LHIST_MIN(type))
		sema_error(sema, max->loc, "lhist()'s max must be greater than its min");
	else if ((LHIST_MAX(type) - LHIST_MIN(type)) / LHIST_STEP(type) > 1000)
		sema_error(sema, step->loc, "lhist() would have more than 1000 buckets");
	call->type = type;
}

static struct value generate_lhist(struct codegen *gen, struct node *call)
{
	int value = gen_value_to_reg(gen, gen_expr(gen, call->args));
	const struct type *type = gen->program->maps.items[gen->assign_target->map_id].value_type;
	int64_t buckets = (LHIST_MAX(type) - LHIST_MIN(type)) / LHIST_STEP(type);
	int bucket = gen_const_reg(gen, 0);
	int done = ir_new_label(&gen->fn);
	/* min, max and step are constants: immediates when they fit */
	bool small = LHIST_MIN(type) >= INT32_MIN && LHIST_MAX(type) <= INT32_MAX &&
		     LHIST_STEP(type) <= INT32_MAX;
	if (small) {
		ir_jump_if_imm(&gen->fn, BPF_JSLT, value, (int32_t)LHIST_MIN(type), done);
		ir_mov_imm(&gen->fn, bucket, buckets + 1);
		ir_jump_if_imm(&gen->fn, BPF_JSGE, value, (int32_t)LHIST_MAX(type), done);
		ir_mov(&gen->fn, bucket, value);
		if (LHIST_MIN(type))
			ir_alu_imm(&gen->fn, BPF_SUB, bucket, (int32_t)LHIST_MIN(type));
		if (LHIST_STEP(type) > 1)
			ir_alu_imm(&gen->fn, BPF_DIV, bucket, (int32_t)LHIST_STEP(type));
	} else {
		int min = gen_const_reg(gen, LHIST_MIN(type)), max = gen_const_reg(gen, LHIST_MAX(type));
		ir_jump_if(&gen->fn, BPF_JSLT, value, min, done);
		ir_mov_imm(&gen->fn, bucket, buckets + 1);
		ir_jump_if(&gen->fn, BPF_JSGE, value, max, done);
		ir_mov(&gen->fn, bucket, value);
		ir_alu(&gen->fn, BPF_SUB, bucket, min);
		ir_alu(&gen->fn, BPF_DIV, bucket, gen_const_reg(gen, LHIST_STEP(type)));
	}
	ir_alu_imm(&gen->fn, BPF_ADD, bucket, 1);
	ir_label(&gen->fn, done);
	struct aggregation_site site = aggregation_begin(gen, bucket);
	aggregation_add_to_bucket(gen, &site, value);
	return value_none();
}

/* lhist boundaries: with a step of whole KiB, multiples of 1M or 1K with a
 * suffix (0.17 put the suffix on any such boundary, `[512, 1K)`; current
 * bpftrace only when the step is whole KiB, `[512, 1024)`). */
static void put_lhist_number(struct strbuf *sb, const struct type *type, int64_t number)
{
	bool suffixed = LHIST_STEP(type) % 1024 == 0 && number != 0;

	if (suffixed && number % (1024 * 1024) == 0)
		strbuf_printf(sb, "%lldM", (long long)(number / (1024 * 1024)));
	else if (suffixed && number % 1024 == 0)
		strbuf_printf(sb, "%lldK", (long long)(number / 1024));
	else
		strbuf_printf(sb, "%lld", (long long)number);
}

static int64_t lhist_bucket_count(const struct type *type)
{
	if (LHIST_STEP(type) <= 0 || LHIST_MAX(type) < LHIST_MIN(type))
		return 0;
	return (LHIST_MAX(type) - LHIST_MIN(type)) / LHIST_STEP(type);
}

static void put_lhist_label(struct strbuf *sb, const struct type *type, int index)
{
	int64_t n = lhist_bucket_count(type);

	if (index == 0) {
		strbuf_puts(sb, "(..., ");
		put_lhist_number(sb, type, LHIST_MIN(type));
		strbuf_putc(sb, ')');
	} else if (index == n + 1) {
		strbuf_putc(sb, '[');
		put_lhist_number(sb, type, LHIST_MAX(type));
		strbuf_puts(sb, ", ...)");
	} else if (LHIST_STEP(type) == 1) {
		/* a bucket of one value: [3], as current bpftrace (0.17: [3, 4)) */
		strbuf_putc(sb, '[');
		put_lhist_number(sb, type, LHIST_MIN(type) + index - 1);
		strbuf_putc(sb, ']');
	} else {
		strbuf_putc(sb, '[');
		put_lhist_number(sb, type, LHIST_MIN(type) + (index - 1) * LHIST_STEP(type));
		strbuf_puts(sb, ", ");
		put_lhist_number(sb, type, LHIST_MIN(type) + index * LHIST_STEP(type));
		strbuf_putc(sb, ')');
	}
}

static void put_lhist_json_bounds(struct strbuf *sb, const struct type *type, int index)
{
	int64_t n = lhist_bucket_count(type);

	if (index == 0) {
		strbuf_printf(sb, "\"max\": %lld, ", (long long)(LHIST_MIN(type) - 1));
	} else if (index == n + 1) {
		strbuf_printf(sb, "\"min\": %lld, ", (long long)LHIST_MAX(type));
	} else {
		int64_t low = LHIST_MIN(type) + (index - 1) * LHIST_STEP(type);
		strbuf_printf(sb, "\"min\": %lld, \"max\": %lld, ", (long long)low,
			      (long long)(low + LHIST_STEP(type) - 1));
	}
}

/* the buckets between min and max, and one on each side */
static int lhist_buckets(const struct type *type)
{
	return (int)lhist_bucket_count(type) + 2;
}

static bool bucket_is_drawn(const struct type *type, int index)
{
	return true;
}

/* Values are integers: [0, 10) holds at most 9. The bucket past max has
 * no bound of its own (it is +Inf's). */
static bool put_bucket_upper(struct strbuf *sb, const struct type *type, int index)
{
	if (index > lhist_bucket_count(type))
		return false;
	strbuf_printf(sb, "%lld", (long long)(LHIST_MIN(type) + index * LHIST_STEP(type) - 1));
	return true;
}

/* Bucket 1 starts at min; the one past max holds from where the steps end. */
static bool bucket_low(const struct type *type, int index, int64_t *low)
{
	*low = LHIST_MIN(type) + (index - 1) * LHIST_STEP(type);
	return true;
}

/* every bucket: there are few, and each scrape then has the same series */
static void put_lhist_metrics(struct metric_writer *out, const struct map_snapshot *snap)
{
	metrics_put_histograms(out, snap, true);
}

const struct aggregation aggregation_lhist = {
	.function = { FUNCTION(lhist, 4, 4), .is_aggregation = true },
	.value_size = 8,
	.is_bucketed = true,
	.summed_value_size = 16,
	.bucket_count = lhist_buckets,
	.fold = aggregation_fold_total,
	.print = print_map_histograms,
	.put_bucket_label = put_lhist_label,
	.put_bucket_bounds = put_lhist_json_bounds,
	.bucket_is_drawn = bucket_is_drawn,
	.put_bucket_upper = put_bucket_upper,
	.bucket_low = bucket_low,
	.metric_type = &metric_histogram,
	.put_metrics = put_lhist_metrics,
};
