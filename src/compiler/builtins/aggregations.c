/*
 * Builtin functions, family: Aggregations: only valid as `@map = f(...)`; each updates its per-CPU map value.
 */
#include "family.h"

/* Aggregations: valid only as the value of `@map = f(...)`; the statement
 * check makes sure of that. Their type carries what printing needs. */
static void check_aggregation_arg(struct sema *sema, struct node *call, struct node *arg)
{
	sema_check_expr(sema, arg);
	if (arg->type && arg->type->kind != TYPE_NONE && !sema_is_int(arg))
		sema_error(sema, arg->loc, "%s() needs an integer argument, not %s", call->name,
			 type_name(arg->type));
}

static void check_simple_aggregation(struct sema *sema, struct node *call, enum type_kind kind)
{
	bool is_signed = true;
	if (call->args) {
		check_aggregation_arg(sema, call, call->args);
		if (call->args->type && call->args->type->kind == TYPE_INT)
			is_signed = call->args->type->is_signed || call->args->type->size < 8;
	}
	call->type = type_aggregation(kind, kind == TYPE_COUNT ? false : is_signed);
}

static void check_count(struct sema *sema, struct node *call) { check_simple_aggregation(sema, call, TYPE_COUNT); }

static void check_sum(struct sema *sema, struct node *call) { check_simple_aggregation(sema, call, TYPE_SUM); }

static void check_avg(struct sema *sema, struct node *call) { check_simple_aggregation(sema, call, TYPE_AVG); }

static void check_min(struct sema *sema, struct node *call) { check_simple_aggregation(sema, call, TYPE_MIN); }

static void check_max(struct sema *sema, struct node *call) { check_simple_aggregation(sema, call, TYPE_MAX); }

static void check_stats(struct sema *sema, struct node *call) { check_simple_aggregation(sema, call, TYPE_STATS); }

static void check_hist(struct sema *sema, struct node *call)
{
	check_aggregation_arg(sema, call, call->args);
	struct type *type = type_aggregation(TYPE_HIST, true);
	struct node *bits = call->args->next;
	if (bits) {
		sema_check_expr(sema, bits);
		if (!sema_is_int_constant(bits) || bits->const_value > 5)
			sema_error(sema, bits->loc, "hist()'s second argument must be a constant from 0 to 5");
		else
			type->hist_bits = (int)bits->const_value;
	}
	call->type = type;
}

static void check_lhist(struct sema *sema, struct node *call)
{
	check_aggregation_arg(sema, call, call->args);
	struct type *type = type_aggregation(TYPE_LHIST, true);
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
	type->lhist_min = (int64_t)min->const_value;
	type->lhist_max = (int64_t)max->const_value;
	type->lhist_step = (int64_t)step->const_value;
	if (type->lhist_min < 0)
		/* as in bpftrace: negative ranges are not supported by lhist */
		sema_error(sema, min->loc, "lhist()'s min must be non-negative, not %lld",
			 (long long)type->lhist_min);
	else if (type->lhist_step <= 0)
		sema_error(sema, step->loc, "lhist()'s step must be positive");
	else if (type->lhist_max <= type->lhist_min)
		sema_error(sema, max->loc, "lhist()'s max must be greater than its min");
	else if ((type->lhist_max - type->lhist_min) / type->lhist_step > 1000)
		sema_error(sema, step->loc, "lhist() would have more than 1000 buckets");
	call->type = type;
}

/* Looks up the aggregation's slot for the assigned map element. On a hit
 * `update` runs with the value pointer; on a miss `init` fills a stack value
 * that is inserted. */
struct aggregation_site {
	struct map_desc *map;
	int key;
	int pointer;
};

static struct aggregation_site aggregation_begin(struct codegen *gen, int bucket_reg)
{
	struct node *target = gen->assign_target;
	struct aggregation_site site;
	site.map = &gen->program->maps.items[target->map_id];
	site.key = gen_map_key(gen, target, site.map);
	if (gen_map_has_bucket(site.map))
		ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)(site.key + gen_user_key_size(site.map)), bucket_reg);
	site.pointer = gen_map_lookup(gen, site.map->id, site.key);
	return site;
}

/* Adds `amount` (a register, or the constant 1 when amount is -1) to the
 * u64 at the start of the value on a hit, or inserts it on a miss. */
static void aggregation_add(struct codegen *gen, struct aggregation_site *site, int amount,
			    bool with_count)
{
	int missing = ir_new_label(&gen->fn), done = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, site->pointer, 0, missing);
	int current = ir_new_vreg(&gen->fn);
	ir_load(&gen->fn, 8, current, site->pointer, 0);
	if (amount < 0)
		ir_alu_imm(&gen->fn, BPF_ADD, current, 1);
	else
		ir_alu(&gen->fn, BPF_ADD, current, amount);
	ir_store(&gen->fn, 8, site->pointer, 0, current);
	if (with_count) {
		ir_load(&gen->fn, 8, current, site->pointer, 8);
		ir_alu_imm(&gen->fn, BPF_ADD, current, 1);
		ir_store(&gen->fn, 8, site->pointer, 8, current);
	}
	ir_jump(&gen->fn, done);
	ir_label(&gen->fn, missing);
	int value = gen_stack_alloc(gen, site->map->value_size);
	if (amount < 0)
		ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)value, 1);
	else
		ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)value, amount);
	if (with_count)
		ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)(value + 8), 1);
	gen_map_update(gen, site->map->id, site->key, value);
	ir_label(&gen->fn, done);
}

static struct value generate_count(struct codegen *gen, struct node *call)
{
	struct aggregation_site site = aggregation_begin(gen, -1);
	aggregation_add(gen, &site, -1, false);
	return value_none();
}

static struct value generate_sum(struct codegen *gen, struct node *call)
{
	int amount = gen_value_to_reg(gen, gen_expr(gen, call->args));
	struct aggregation_site site = aggregation_begin(gen, -1);
	aggregation_add(gen, &site, amount, false);
	return value_none();
}

static struct value generate_avg(struct codegen *gen, struct node *call)
{
	int amount = gen_value_to_reg(gen, gen_expr(gen, call->args));
	struct aggregation_site site = aggregation_begin(gen, -1);
	aggregation_add(gen, &site, amount, true);
	return value_none();
}

static struct value generate_stats(struct codegen *gen, struct node *call)
{
	return generate_avg(gen, call);
}

static void generate_extreme(struct codegen *gen, struct node *call, bool is_max)
{
	int amount = gen_value_to_reg(gen, gen_expr(gen, call->args));
	struct aggregation_site site = aggregation_begin(gen, -1);
	bool is_signed = site.map->value_type->is_signed;
	int missing = ir_new_label(&gen->fn), done = ir_new_label(&gen->fn);
	int store = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, site.pointer, 0, missing);
	int is_set = ir_new_vreg(&gen->fn), current = ir_new_vreg(&gen->fn);
	ir_load(&gen->fn, 8, is_set, site.pointer, 8);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, is_set, 0, store);
	ir_load(&gen->fn, 8, current, site.pointer, 0);
	/* keep the current value unless the new one beats it */
	int keep_op = is_max ? (is_signed ? BPF_JSGE : BPF_JGE) : (is_signed ? BPF_JSLE : BPF_JLE);
	ir_jump_if(&gen->fn, keep_op, current, amount, done);
	ir_label(&gen->fn, store);
	ir_store(&gen->fn, 8, site.pointer, 0, amount);
	ir_store_imm(&gen->fn, 8, site.pointer, 8, 1);
	ir_jump(&gen->fn, done);
	ir_label(&gen->fn, missing);
	int value = gen_stack_alloc(gen, 16);
	ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)value, amount);
	ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)(value + 8), 1);
	gen_map_update(gen, site.map->id, site.key, value);
	ir_label(&gen->fn, done);
}

static struct value generate_min(struct codegen *gen, struct node *call)
{
	generate_extreme(gen, call, false);
	return value_none();
}

static struct value generate_max(struct codegen *gen, struct node *call)
{
	generate_extreme(gen, call, true);
	return value_none();
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
	int bits = gen->program->maps.items[gen->assign_target->map_id].value_type->hist_bits;
	int bucket = gen_hist_bucket(gen, value, bits);
	struct aggregation_site site = aggregation_begin(gen, bucket);
	aggregation_add(gen, &site, -1, false);
	return value_none();
}

static struct value generate_lhist(struct codegen *gen, struct node *call)
{
	int value = gen_value_to_reg(gen, gen_expr(gen, call->args));
	const struct type *type = gen->program->maps.items[gen->assign_target->map_id].value_type;
	int64_t buckets = (type->lhist_max - type->lhist_min) / type->lhist_step;
	int bucket = gen_const_reg(gen, 0);
	int done = ir_new_label(&gen->fn);
	/* min, max and step are constants: immediates when they fit */
	bool small = type->lhist_min >= INT32_MIN && type->lhist_max <= INT32_MAX &&
		     type->lhist_step <= INT32_MAX;
	if (small) {
		ir_jump_if_imm(&gen->fn, BPF_JSLT, value, (int32_t)type->lhist_min, done);
		ir_mov_imm(&gen->fn, bucket, buckets + 1);
		ir_jump_if_imm(&gen->fn, BPF_JSGE, value, (int32_t)type->lhist_max, done);
		ir_mov(&gen->fn, bucket, value);
		if (type->lhist_min)
			ir_alu_imm(&gen->fn, BPF_SUB, bucket, (int32_t)type->lhist_min);
		if (type->lhist_step > 1)
			ir_alu_imm(&gen->fn, BPF_DIV, bucket, (int32_t)type->lhist_step);
	} else {
		int min = gen_const_reg(gen, type->lhist_min), max = gen_const_reg(gen, type->lhist_max);
		ir_jump_if(&gen->fn, BPF_JSLT, value, min, done);
		ir_mov_imm(&gen->fn, bucket, buckets + 1);
		ir_jump_if(&gen->fn, BPF_JSGE, value, max, done);
		ir_mov(&gen->fn, bucket, value);
		ir_alu(&gen->fn, BPF_SUB, bucket, min);
		ir_alu(&gen->fn, BPF_DIV, bucket, gen_const_reg(gen, type->lhist_step));
	}
	ir_alu_imm(&gen->fn, BPF_ADD, bucket, 1);
	ir_label(&gen->fn, done);
	struct aggregation_site site = aggregation_begin(gen, bucket);
	aggregation_add(gen, &site, -1, false);
	return value_none();
}

const struct function_def builtins_aggregations[] = {
	{ FUNCTION(count, 0, 0), .is_aggregation = true },
	{ FUNCTION(sum, 1, 1), .is_aggregation = true },
	{ FUNCTION(avg, 1, 1), .is_aggregation = true },
	{ FUNCTION(min, 1, 1), .is_aggregation = true },
	{ FUNCTION(max, 1, 1), .is_aggregation = true },
	{ FUNCTION(stats, 1, 1), .is_aggregation = true },
	{ FUNCTION(hist, 1, 2), .is_aggregation = true },
	{ FUNCTION(lhist, 4, 4), .is_aggregation = true },
	{ 0 },
};
