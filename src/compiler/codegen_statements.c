/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Code generation of statements: assignments to variables and maps,
 * if/while/for/unroll, for ($kv : @m) loops, break/continue/return and
 * blocks. Each statement gets its temporaries from the stack above a
 * watermark and hands them back when it ends, so the next statement reuses
 * them. A loop over a map becomes a callback subprogram of
 * bpf_for_each_map_elem (gen_callback_begin/end and gen_for_each_element,
 * which builtins that walk a map use too); its body reaches the probe's
 * variables through the context pointer. Expressions are codegen.c's; codegen_probe there calls
 * gen_stmts on a probe's body.
 */
#include "codegen_internal.h"

#include <string.h>

#include "builtins/builtins.h"

/* ---- statements ---- */

static void gen_assign(struct codegen *gen, struct node *node)
{
	struct node *target = node->lhs;
	if (target->kind == NODE_VAR) {
		struct var_info *var = gen_var_of(gen, target);
		int offset;
		int base = gen_var_address(gen, var, &offset);
		if (!node->rhs) { /* let $x; starts at zero each time it runs */
			int size = type_storage_size(var->type) > 0 ? type_storage_size(var->type) : 8;
			for (int at = 0; at < size; at += 8)
				ir_store_imm(&gen->fn, 8, base, (int16_t)(offset + at), 0);
			return;
		}
		if (node->op != OP_ASSIGN) {
			int current = gen_load_int(gen, base, offset, 8, false);
			int delta = gen_value_to_reg(gen, gen_expr(gen, node->rhs));
			if (var->type->kind == TYPE_POINTER && (node->op == OP_ADD || node->op == OP_SUB) &&
			    type_pointer_step(var->type) > 1) { /* $p += n: n whole elements */
				int count = delta;
				delta = ir_new_vreg(&gen->fn);
				ir_mov(&gen->fn, delta, count);
				ir_alu_imm(&gen->fn, BPF_MUL, delta, type_pointer_step(var->type));
			}
			gen_arithmetic(gen, node->op, current, delta, var->type, node);
			/* `$x += n` on a narrow integer wraps in its type, as C's does */
			gen_convert_int(gen, current, var->type);
			ir_store(&gen->fn, 8, base, (int16_t)offset, current);
			return;
		}
		struct value value = gen_expr(gen, node->rhs);
		if (value.kind == VALUE_REG && var->type->kind == TYPE_INT)
			gen_convert_int(gen, value.reg, var->type);
		/* a slot the prologue left unzeroed must be written whole here */
		if (value.kind != VALUE_REG && gen->assigned_first && gen->assigned_first[target->var_id])
			gen_zero_stack(gen, offset, 8);
		gen_store_value(gen, value, base, offset, var->type);
		return;
	}
	struct map_desc *map = &gen->program->maps.items[target->map_id];
	if (type_is_aggregation(map->value_type)) {
		gen->assign_target = target;
		node->rhs->function->generate(gen, node->rhs);
		gen->assign_target = NULL;
		return;
	}
	if (node->op != OP_ASSIGN) {
		int delta = gen_value_to_reg(gen, gen_expr(gen, node->rhs));
		gen_update_map_int(gen, target, node->op, delta, NULL, node);
		return;
	}
	struct value value = gen_expr(gen, node->rhs);
	int value_offset = gen_value_to_stack(gen, value, map->value_type);
	int key = gen_map_key(gen, target, map);
	gen_map_update(gen, map->id, key, value_offset);
}

/* A condition sema folded to a constant costs nothing when true and is a
 * plain jump when false: that is how a tool's options that are off vanish. */
bool gen_is_known(const struct node *node, bool value)
{
	return node->is_constant && node->type && node->type->kind == TYPE_INT &&
	       (node->const_value != 0) == value;
}

/* Jumps to `label` when cond's truth is `when` and falls through
 * otherwise. Conditions are branches, not values: && and || become chains
 * of jumps, ! swaps the sense, and an integer comparison is one jump, with
 * no 0 or 1 computed in between (what clang makes of an if). */
void gen_branch(struct codegen *gen, struct node *cond, bool when, int label)
{
	if (gen_is_known(cond, when)) {
		ir_jump(&gen->fn, label);
		return;
	}
	if (gen_is_known(cond, !when))
		return;
	struct src_loc saved = gen->fn.loc;
	gen->fn.loc = cond->loc;
	if (cond->kind == NODE_UNARY && cond->op == OP_LNOT) {
		gen_branch(gen, cond->lhs, !when, label);
	} else if (cond->kind == NODE_BINARY && (cond->op == OP_LAND || cond->op == OP_LOR)) {
		/* a && b is false, and a || b true, as soon as a is */
		if ((cond->op == OP_LAND) != when) {
			gen_branch(gen, cond->lhs, when, label);
			gen_branch(gen, cond->rhs, when, label);
		} else {
			int decided = ir_new_label(&gen->fn);
			gen_branch(gen, cond->lhs, !when, decided);
			gen_branch(gen, cond->rhs, when, label);
			ir_label(&gen->fn, decided);
		}
	} else if (gen_is_scalar_comparison(cond)) {
		gen_comparison_jump(gen, cond, when, label);
	} else {
		int reg = gen_value_to_reg(gen, gen_expr(gen, cond));
		ir_jump_if_imm(&gen->fn, when ? BPF_JNE : BPF_JEQ, reg, 0, label);
	}
	gen->fn.loc = saved;
}

void gen_condition_jump(struct codegen *gen, struct node *cond, int false_label)
{
	gen_branch(gen, cond, false, false_label);
}

/* Starts generating a callback subprogram; returns the caller's function,
 * to be handed back to gen_callback_end. */
struct ir_function gen_callback_begin(struct codegen *gen, int *saved_high)
{
	struct ir_function caller = gen->fn;
	*saved_high = gen->stack_high;
	gen->other_insns += caller.insns.count;
	memset(&gen->fn, 0, sizeof(gen->fn));
	gen->fn.loc = caller.loc;
	gen->stack_high = 0;
	return caller;
}

/* Finishes the callback and returns its index. Its registers are allocated
 * with the probe's (codegen_probe), once it is known whether the frames
 * stay on the stack. */
int gen_callback_end(struct codegen *gen, struct ir_function caller, int saved_high)
{
	gen->fn.stack_size = gen->stack_high;
	vec_push(&gen->subprograms, gen->fn);
	vec_push(&gen->callbacks, ((struct callback_info){ .context_reg = -1 }));
	gen->other_insns += gen->fn.insns.count - caller.insns.count;
	gen->fn = caller;
	gen->stack_high = saved_high;
	return gen->subprograms.count - 1;
}

/* Calls bpf_for_each_map_elem(map, callback, context, 0); returns r0.
 * move_frames_to_map finds the context two instructions before the call
 * (`r3 = v` or `r3 += offset` after `r3 = r10`). */
int gen_for_each_element(struct codegen *gen, int map_id, int subprogram, struct helper_arg context)
{
	ir_ld_map(&gen->fn, BPF_REG_1, map_id);
	ir_ld_func(&gen->fn, BPF_REG_2, subprogram);
	struct helper_arg rest[2] = { context, ARG_IMM(0) };
	/* r1 and r2 are set; the remaining arguments follow the usual path */
	for (int i = 0; i < 2; i++) {
		if (rest[i].kind == HELPER_ARG_REG)
			ir_mov(&gen->fn, BPF_REG_3 + i, (int)rest[i].value);
		else if (rest[i].kind == HELPER_ARG_STACK) {
			ir_mov(&gen->fn, BPF_REG_3 + i, BPF_REG_10);
			ir_alu_imm(&gen->fn, BPF_ADD, BPF_REG_3 + i, (int32_t)rest[i].value);
		} else
			ir_mov_imm(&gen->fn, BPF_REG_3 + i, rest[i].value);
	}
	ir_call(&gen->fn, BPF_FUNC_for_each_map_elem);
	int result = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, result, BPF_REG_0);
	return result;
}

/* for ($kv : @m) { body }: the body becomes a callback of
 * bpf_for_each_map_elem; $kv is a (key, value) tuple in the callback's frame
 * and the probe's other variables are reached through the context pointer. */
static void gen_for_map(struct codegen *gen, struct node *node)
{
	struct map_desc *map = &gen->program->maps.items[node->rhs->map_id];
	struct var_info *kv = gen_var_of(gen, node->lhs);
	int saved_high;
	bool was_in_callback = gen->in_callback;
	int saved_reg = gen->outer_vars_reg, saved_base = gen->outer_vars_base;
	int saved_exit = gen->exit_label, saved_kv = kv->stack_offset;
	struct ir_function caller = gen_callback_begin(gen, &saved_high);

	int key = ir_new_vreg(&gen->fn), value = ir_new_vreg(&gen->fn);
	int context = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, key, BPF_REG_2);
	ir_mov(&gen->fn, value, BPF_REG_3);
	ir_mov(&gen->fn, context, BPF_REG_4);
	if (!was_in_callback)
		gen->outer_vars_base = gen->vars_base;
	gen->outer_vars_reg = context;
	gen->in_callback = true;
	kv->stack_offset = gen_stack_alloc(gen, kv->type->size);
	gen_copy_memory(gen, BPF_REG_10, kv->stack_offset, key, 0, map->key_size);
	gen_copy_memory(gen, BPF_REG_10, kv->stack_offset + kv->type->fields[1].offset, value, 0,
		    map->value_size);
	struct loop_labels labels = { ir_new_label(&gen->fn), ir_new_label(&gen->fn) };
	gen->exit_label = labels.break_label;
	vec_push(&gen->loops, labels);
	gen_stmts(gen, node->body);
	gen->loops.count--;
	ir_label(&gen->fn, labels.continue_label);
	ir_mov_imm(&gen->fn, BPF_REG_0, 0);
	ir_exit(&gen->fn);
	ir_label(&gen->fn, labels.break_label);
	ir_mov_imm(&gen->fn, BPF_REG_0, 1);
	ir_exit(&gen->fn);
	int subprogram = gen_callback_end(gen, caller, saved_high);
	gen->callbacks.items[subprogram] = (struct callback_info){ .context_reg = context, .entry_count = 3 };

	gen->in_callback = was_in_callback;
	gen->exit_label = saved_exit;
	kv->stack_offset = saved_kv;
	struct helper_arg vars = was_in_callback ? ARG_REG(saved_reg)
				 : gen->vars_base ? ARG_STACK(gen->vars_base) : ARG_IMM(0);
	gen->outer_vars_reg = saved_reg;
	gen->outer_vars_base = saved_base;
	gen_for_each_element(gen, map->id, subprogram, vars);
	if (gen->probe->return_flag_var >= 0) { /* a return in the body ends the probe */
		int offset;
		int base = gen_var_address(gen, &gen->probe->vars.items[gen->probe->return_flag_var],
					   &offset);
		int returned = gen_load_int(gen, base, offset, 8, false);
		ir_jump_if_imm(&gen->fn, BPF_JNE, returned, 0, gen->exit_label);
	}
}

/*
 * Nested unrolls multiply: three levels of 100 are a million copies. The
 * first copy of a body shows what one costs; the copy will be repeated by
 * this unroll and again by every unroll around it, so the estimate is its
 * size times the product of their counts. The first level whose product
 * passes what the kernel loads is refused, before anything more is
 * generated: only the innermost body is ever generated once too often.
 */
static void gen_unroll(struct codegen *gen, struct node *node, int watermark)
{
	struct unroll_frame frame = { .node = node, .outer = gen->unroll };
	gen->unroll = &frame;
	for (uint64_t i = 0; i < node->lhs->const_value && !gen->too_large; i++) {
		int before = gen->fn.insns.count + gen->other_insns;
		gen_stmts(gen, node->body);
		gen->fn.stack_size = watermark;
		if (i > 0 || gen->too_large)
			continue;
		uint64_t total = (uint64_t)(gen->fn.insns.count + gen->other_insns - before);
		for (const struct unroll_frame *level = &frame; level; level = level->outer) {
			/* counts are at most 100: no overflow before the limit is passed */
			total *= (uint64_t)level->node->lhs->const_value;
			if ((uint64_t)before + total <= CODEGEN_INSNS_MAX)
				continue;
			diag_error(gen->sema->diag, level->node->loc,
				   "unroll(%lld) makes this probe about %llu instructions, more than "
				   "the %d the kernel loads",
				   (long long)level->node->lhs->const_value,
				   (unsigned long long)((uint64_t)before + total), CODEGEN_INSNS_MAX);
			gen->sema->error_count++;
			gen->too_large = true;
			break;
		}
	}
	gen->unroll = frame.outer;
}

static void gen_stmt(struct codegen *gen, struct node *node)
{
	int watermark = gen->fn.stack_size;
	struct src_loc saved = gen->fn.loc;
	gen->fn.loc = node->loc;
	switch (node->kind) {
	case NODE_EXPR_STMT:
		gen_expr(gen, node->lhs);
		break;
	case NODE_ASSIGN:
		gen_assign(gen, node);
		break;
	case NODE_IF: {
		if (gen_is_known(node->cond, true) || gen_is_known(node->cond, false)) {
			gen_stmts(gen, node->cond->const_value ? node->then : node->els);
			break;
		}
		/* the else branch comes first, where the condition's jump falls
		 * through: the verifier walks the fall-through first, and a loop
		 * body with an unknown condition verifies in far fewer steps when
		 * the branch that skips the then-block is walked first (as when
		 * conditions were 0/1 values). `if (c) { return; }` still ends up
		 * one jump once jumps are threaded (ir_simplify_jumps). */
		int then = ir_new_label(&gen->fn), done = ir_new_label(&gen->fn);
		gen_branch(gen, node->cond, true, then);
		gen->fn.stack_size = watermark;
		gen_stmts(gen, node->els);
		ir_jump(&gen->fn, done);
		ir_label(&gen->fn, then);
		gen_stmts(gen, node->then);
		ir_label(&gen->fn, done);
		break;
	}
	case NODE_WHILE: {
		struct loop_labels labels = { ir_new_label(&gen->fn), ir_new_label(&gen->fn) };
		ir_label(&gen->fn, labels.continue_label);
		/* leaving the loop is the fall-through, walked first (see if) */
		if (gen_is_known(node->cond, true)) {
			gen_condition_jump(gen, node->cond, labels.break_label);
		} else {
			int body = ir_new_label(&gen->fn);
			gen_branch(gen, node->cond, true, body);
			ir_jump(&gen->fn, labels.break_label);
			ir_label(&gen->fn, body);
		}
		gen->fn.stack_size = watermark;
		vec_push(&gen->loops, labels);
		gen_stmts(gen, node->body);
		gen->loops.count--;
		ir_jump(&gen->fn, labels.continue_label);
		ir_label(&gen->fn, labels.break_label);
		break;
	}
	case NODE_FOR_RANGE: {
		struct var_info *var = gen_var_of(gen, node->lhs);
		int var_offset;
		int var_base = gen_var_address(gen, var, &var_offset);
		int start = gen_value_to_reg(gen, gen_expr(gen, node->cond));
		ir_store(&gen->fn, 8, var_base, (int16_t)var_offset, start);
		int end_slot = gen_stack_alloc(gen, 8);
		ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)end_slot, gen_value_to_reg(gen, gen_expr(gen, node->rhs)));
		watermark = gen->fn.stack_size;
		int top = ir_new_label(&gen->fn);
		struct loop_labels labels = { ir_new_label(&gen->fn), ir_new_label(&gen->fn) };
		ir_label(&gen->fn, top);
		int current = gen_load_int(gen, var_base, var_offset, 8, false);
		int end = gen_load_int(gen, BPF_REG_10, end_slot, 8, false);
		ir_jump_if(&gen->fn, BPF_JSGE, current, end, labels.break_label);
		vec_push(&gen->loops, labels);
		gen_stmts(gen, node->body);
		gen->loops.count--;
		ir_label(&gen->fn, labels.continue_label);
		int next = gen_load_int(gen, var_base, var_offset, 8, false);
		ir_alu_imm(&gen->fn, BPF_ADD, next, 1);
		ir_store(&gen->fn, 8, var_base, (int16_t)var_offset, next);
		ir_jump(&gen->fn, top);
		ir_label(&gen->fn, labels.break_label);
		break;
	}
	case NODE_UNROLL:
		gen_unroll(gen, node, watermark);
		break;
	case NODE_FOR_MAP:
		gen_for_map(gen, node);
		break;
	case NODE_BREAK:
		ir_jump(&gen->fn, gen->loops.items[gen->loops.count - 1].break_label);
		break;
	case NODE_CONTINUE:
		ir_jump(&gen->fn, gen->loops.items[gen->loops.count - 1].continue_label);
		break;
	case NODE_RETURN:
		if (gen->in_callback && gen->probe->return_flag_var >= 0) {
			/* inside for ($kv : @m): stop the iteration and tell the
			 * caller to end the probe (gen_for_map) */
			int offset;
			int base = gen_var_address(gen, &gen->probe->vars.items[gen->probe->return_flag_var],
					       &offset);
			ir_store_imm(&gen->fn, 8, base, (int16_t)offset, 1);
		}
		ir_jump(&gen->fn, gen->exit_label);
		break;
	case NODE_BLOCK:
		gen_stmts(gen, node->body);
		break;
	default:
		break;
	}
	gen->fn.stack_size = watermark;
	gen->fn.loc = saved;
}

void gen_stmts(struct codegen *gen, struct node *list)
{
	for (; list; list = list->next)
		gen_stmt(gen, list);
}
