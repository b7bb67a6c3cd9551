/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The aggregation table, and the pieces several aggregations share: the
 * checks of their argument, the map update of an event, reading a value
 * in an expression, and folding the CPUs' copies in user space.
 */
#include "aggregation.h"

#include <bpf/libbpf.h>
#include <string.h>

#include "../compiler/codegen_internal.h"
#include "../compiler/sema_internal.h"
#include "../runtime/snapshot.h"

static const struct aggregation *const aggregations[] = {
	&aggregation_count, &aggregation_sum, &aggregation_avg, &aggregation_min,
	&aggregation_max, &aggregation_stats, &aggregation_hist, &aggregation_lhist,
	&aggregation_tseries,
};

const struct aggregation *aggregation_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof(aggregations) / sizeof(aggregations[0]); i++)
		if (strcmp(aggregations[i]->function.name, name) == 0)
			return aggregations[i];
	return NULL;
}

/* ---- checks ---- */

/* Aggregations: valid only as the value of `@map = f(...)`; the statement
 * check makes sure of that. Their type carries what printing needs. */
void aggregation_check_arg(struct sema *sema, struct node *call, struct node *arg)
{
	sema_check_expr(sema, arg);
	if (arg->type && arg->type->kind != TYPE_NONE && !sema_is_int(arg))
		sema_error(sema, arg->loc, "%s() needs an integer argument, not %s", call->name,
			   type_name(arg->type));
}

void aggregation_check_simple(struct sema *sema, struct node *call, const struct aggregation *kind)
{
	bool is_signed = true;
	if (call->args) {
		aggregation_check_arg(sema, call, call->args);
		if (call->args->type && call->args->type->kind == TYPE_INT)
			is_signed = call->args->type->is_signed || call->args->type->size < 8;
	}
	call->type = type_aggregation(kind, kind == &aggregation_count ? false : is_signed);
}

/* ---- the update of an event ---- */

struct aggregation_site aggregation_begin(struct codegen *gen, int bucket_reg)
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

void aggregation_add(struct codegen *gen, struct aggregation_site *site, int amount, int second)
{
	int missing = ir_new_label(&gen->fn), done = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, site->pointer, 0, missing);
	int current = ir_new_vreg(&gen->fn);
	for (int field = 0; field < 2; field++) {
		int add = field == 0 ? amount : second;
		if (add == AGGREGATION_NOTHING)
			continue;
		ir_load(&gen->fn, 8, current, site->pointer, (int16_t)(field * 8));
		if (add == AGGREGATION_ONE)
			ir_alu_imm(&gen->fn, BPF_ADD, current, 1);
		else
			ir_alu(&gen->fn, BPF_ADD, current, add);
		ir_store(&gen->fn, 8, site->pointer, (int16_t)(field * 8), current);
	}
	ir_jump(&gen->fn, done);
	ir_label(&gen->fn, missing);
	int value = gen_stack_alloc(gen, site->map->value_size);
	for (int field = 0; field < 2; field++) {
		int add = field == 0 ? amount : second;
		int16_t offset = (int16_t)(value + field * 8);
		if (add == AGGREGATION_ONE)
			ir_store_imm(&gen->fn, 8, BPF_REG_10, offset, 1);
		else if (add != AGGREGATION_NOTHING)
			ir_store(&gen->fn, 8, BPF_REG_10, offset, add);
	}
	gen_map_update(gen, site->map->id, site->key, value);
	ir_label(&gen->fn, done);
}

bool aggregation_map_has_sums(const struct map_desc *map)
{
	const struct aggregation *aggregation = map->value_type->aggregation;

	return aggregation && aggregation->summed_value_size &&
	       map->value_size == (uint32_t)aggregation->summed_value_size;
}

void aggregation_add_to_bucket(struct codegen *gen, struct aggregation_site *site, int value)
{
	aggregation_add(gen, site, AGGREGATION_ONE,
			aggregation_map_has_sums(site->map) ? value : AGGREGATION_NOTHING);
}

/* min()/max(): { value, is_set } per CPU */
void aggregation_update_extreme(struct codegen *gen, struct node *call, bool is_max)
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

/* ---- reading a value in an expression ---- */

/* The value of count/sum/min/max/avg as one number: every possible CPU's
 * share is fetched with bpf_map_lookup_percpu_elem and combined. */
struct value aggregation_read(struct codegen *gen, struct node *node, struct map_desc *map, int key,
			      enum aggregation_fold how)
{
	bool is_signed = map->value_type->is_signed;
	int total = gen_const_reg(gen, 0), count = gen_const_reg(gen, 0), seen = gen_const_reg(gen, 0);
	int cpus = libbpf_num_possible_cpus();
	for (int cpu = 0; cpu < (cpus > 0 ? cpus : 1); cpu++) {
		struct helper_arg args[3] = { ARG_MAP(map->id), ARG_STACK(key), ARG_IMM(cpu) };
		int pointer = gen_call_helper(gen, BPF_FUNC_map_lookup_percpu_elem, args, 3);
		int next = ir_new_label(&gen->fn);
		ir_jump_if_imm(&gen->fn, BPF_JEQ, pointer, 0, next);
		int share = ir_new_vreg(&gen->fn);
		ir_load(&gen->fn, 8, share, pointer, 0);
		if (how == FOLD_MIN || how == FOLD_MAX) {
			int is_set = ir_new_vreg(&gen->fn);
			ir_load(&gen->fn, 8, is_set, pointer, 8);
			ir_jump_if_imm(&gen->fn, BPF_JEQ, is_set, 0, next);
			int take = ir_new_label(&gen->fn);
			ir_jump_if_imm(&gen->fn, BPF_JEQ, seen, 0, take);
			int keep = how == FOLD_MAX ? (is_signed ? BPF_JSGE : BPF_JGE)
						    : (is_signed ? BPF_JSLE : BPF_JLE);
			ir_jump_if(&gen->fn, keep, total, share, next);
			ir_label(&gen->fn, take);
			ir_mov(&gen->fn, total, share);
			ir_mov_imm(&gen->fn, seen, 1);
		} else {
			ir_alu(&gen->fn, BPF_ADD, total, share);
			if (how == FOLD_AVERAGE) {
				ir_load(&gen->fn, 8, share, pointer, 8);
				ir_alu(&gen->fn, BPF_ADD, count, share);
			}
		}
		ir_label(&gen->fn, next);
	}
	if (how == FOLD_AVERAGE) {
		int done = ir_new_label(&gen->fn);
		ir_jump_if_imm(&gen->fn, BPF_JEQ, count, 0, done);
		if (is_signed)
			gen_signed_divide(gen, total, count, false);
		else
			ir_alu(&gen->fn, BPF_DIV, total, count);
		ir_label(&gen->fn, done);
	}
	return value_reg(total, node->type);
}

/* ---- folding the CPUs' copies in user space ---- */

static uint64_t read_u64(const unsigned char *data)
{
	uint64_t value;

	memcpy(&value, data, sizeof(value));
	return value;
}

uint64_t aggregation_fold_sum(const struct map_snapshot *snap, const unsigned char *value, int field)
{
	uint64_t total = 0;

	for (int cpu = 0; cpu < snap->ncpus; cpu++)
		total += read_u64(value + (size_t)cpu * snap->value_stride + field * 8);
	return total;
}

uint64_t aggregation_fold_average(const struct map_snapshot *snap, const unsigned char *value,
				  bool is_signed)
{
	uint64_t sum = aggregation_fold_sum(snap, value, 0);
	uint64_t count = aggregation_fold_sum(snap, value, 1);

	if (count == 0)
		return 0;
	if (is_signed)
		return (uint64_t)((int64_t)sum / (int64_t)count);
	return sum / count;
}

uint64_t aggregation_fold_total(const struct map_snapshot *snap, const struct type *type,
				const unsigned char *value)
{
	return aggregation_fold_sum(snap, value, 0);
}

uint64_t aggregation_fold_mean(const struct map_snapshot *snap, const struct type *type,
			       const unsigned char *value)
{
	return aggregation_fold_average(snap, value, type->is_signed);
}

/* min/max: each CPU holds { value, is_set }; CPUs that never ran it are skipped. */
uint64_t aggregation_fold_extreme(const struct map_snapshot *snap, const unsigned char *value,
			     bool is_max, bool is_signed)
{
	bool have = false;
	uint64_t best = 0;

	for (int cpu = 0; cpu < snap->ncpus; cpu++) {
		const unsigned char *slot = value + (size_t)cpu * snap->value_stride;
		uint64_t v = read_u64(slot);
		if (!read_u64(slot + 8))
			continue;
		bool better;
		if (!have)
			better = true;
		else if (is_signed)
			better = is_max ? (int64_t)v > (int64_t)best : (int64_t)v < (int64_t)best;
		else
			better = is_max ? v > best : v < best;
		if (better)
			best = v;
		have = true;
	}
	return best;
}

struct type *type_aggregation(const struct aggregation *aggregation, bool is_signed)
{
	struct type *type = type_new(TYPE_AGGREGATION);
	type->aggregation = aggregation;
	type->aggregation_name = aggregation->function.name;
	type->is_signed = is_signed;
	type->size = aggregation->value_size;
	return type;
}

bool type_is_bucketed(const struct type *type)
{
	return type_is_aggregation(type) && type->aggregation->is_bucketed;
}
