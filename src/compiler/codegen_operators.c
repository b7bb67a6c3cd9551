/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Code generation of operators: arithmetic and comparisons on registers,
 * strings and arrays compared byte by byte, && and || with short circuits,
 * unary operators and dereferences. Pointer arithmetic steps over whole
 * elements, as in C: `p + 1` on a uint64 pointer adds 8 to the address.
 * codegen.c calls in here for NODE_BINARY and NODE_UNARY, and for the
 * arithmetic of compound assignments and ++/--.
 */
#include "codegen_internal.h"

#include <string.h>

/* ---- operators ---- */

/* Signed division and remainder with C's truncation toward zero, built from
 * BPF's unsigned ones (older kernels have no signed divide). */
void gen_signed_divide(struct codegen *gen, int dividend, int divisor, bool remainder)
{
	int negate = gen_const_reg(gen, 0);
	int positive_a = ir_new_label(&gen->fn), positive_b = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JSGE, dividend, 0, positive_a);
	ir_alu_imm(&gen->fn, BPF_NEG, dividend, 0);
	ir_alu_imm(&gen->fn, BPF_XOR, negate, 1);
	ir_label(&gen->fn, positive_a);
	ir_jump_if_imm(&gen->fn, BPF_JSGE, divisor, 0, positive_b);
	ir_alu_imm(&gen->fn, BPF_NEG, divisor, 0);
	if (!remainder)
		ir_alu_imm(&gen->fn, BPF_XOR, negate, 1);
	ir_label(&gen->fn, positive_b);
	ir_alu(&gen->fn, remainder ? BPF_MOD : BPF_DIV, dividend, divisor);
	int done = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, negate, 0, done);
	ir_alu_imm(&gen->fn, BPF_NEG, dividend, 0);
	ir_label(&gen->fn, done);
}

static bool is_signed_operand(const struct type *type)
{
	return type->kind == TYPE_INT && (type->is_signed || type->size < 8);
}

static int jump_op_for(enum op op, bool is_signed)
{
	switch (op) {
	case OP_EQ: return BPF_JEQ;
	case OP_NE: return BPF_JNE;
	case OP_LT: return is_signed ? BPF_JSLT : BPF_JLT;
	case OP_LE: return is_signed ? BPF_JSLE : BPF_JLE;
	case OP_GT: return is_signed ? BPF_JSGT : BPF_JGT;
	case OP_GE: return is_signed ? BPF_JSGE : BPF_JGE;
	default: return BPF_JEQ;
	}
}

/* Compares two zero-padded objects of `size` bytes on the stack a word at a
 * time (arrays). Result 1 when equal. */
static int gen_memory_equal(struct codegen *gen, int a_offset, int b_offset, int size)
{
	int result = gen_const_reg(gen, 0);
	int differ = ir_new_label(&gen->fn);
	int left = ir_new_vreg(&gen->fn), right = ir_new_vreg(&gen->fn);
	for (int at = 0; at < ((size + 7) & ~7); at += 8) {
		ir_load(&gen->fn, 8, left, BPF_REG_10, (int16_t)(a_offset + at));
		ir_load(&gen->fn, 8, right, BPF_REG_10, (int16_t)(b_offset + at));
		ir_jump_if(&gen->fn, BPF_JNE, left, right, differ);
	}
	ir_mov_imm(&gen->fn, result, 1);
	ir_label(&gen->fn, differ);
	return result;
}

/* Compares two strings up to the first NUL of the shorter type. Result 1 when equal. */
int gen_string_equal(struct codegen *gen, struct value a, struct value b, int limit)
{
	int result = gen_const_reg(gen, 0);
	int differ = ir_new_label(&gen->fn), equal = ir_new_label(&gen->fn);
	int left = ir_new_vreg(&gen->fn), right = ir_new_vreg(&gen->fn);
	for (int i = 0; i < limit; i++) {
		ir_load(&gen->fn, 1, left, BPF_REG_10, (int16_t)(a.stack_offset + i));
		ir_load(&gen->fn, 1, right, BPF_REG_10, (int16_t)(b.stack_offset + i));
		ir_jump_if(&gen->fn, BPF_JNE, left, right, differ);
		ir_jump_if_imm(&gen->fn, BPF_JEQ, left, 0, equal);
	}
	ir_label(&gen->fn, equal);
	ir_mov_imm(&gen->fn, result, 1);
	ir_label(&gen->fn, differ);
	return result;
}

/* Two buf() values: the same length, and the same bytes up to it (what
 * lies past the length is not compared). */
static int gen_buffer_equal(struct codegen *gen, int a_offset, int b_offset, int capacity)
{
	int result = gen_const_reg(gen, 0);
	int differ = ir_new_label(&gen->fn), equal = ir_new_label(&gen->fn);
	int length = gen_load_int(gen, BPF_REG_10, a_offset, 8, false);
	int other = gen_load_int(gen, BPF_REG_10, b_offset, 8, false);
	ir_jump_if(&gen->fn, BPF_JNE, length, other, differ);
	int left = ir_new_vreg(&gen->fn), right = ir_new_vreg(&gen->fn);
	for (int i = 0; i < capacity; i++) {
		ir_jump_if_imm(&gen->fn, BPF_JLE, length, i, equal);
		ir_load(&gen->fn, 1, left, BPF_REG_10, (int16_t)(a_offset + 8 + i));
		ir_load(&gen->fn, 1, right, BPF_REG_10, (int16_t)(b_offset + 8 + i));
		ir_jump_if(&gen->fn, BPF_JNE, left, right, differ);
	}
	ir_label(&gen->fn, equal);
	ir_mov_imm(&gen->fn, result, 1);
	ir_label(&gen->fn, differ);
	return result;
}

int gen_test_imm(struct codegen *gen, int jump_op, int reg, int32_t imm)
{
	int truth = gen_const_reg(gen, 1);
	int done = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, jump_op, reg, imm, done);
	ir_mov_imm(&gen->fn, truth, 0);
	ir_label(&gen->fn, done);
	return truth;
}

static struct value gen_logical(struct codegen *gen, struct node *node)
{
	/* `1 && x`, `0 || x`, `x && 1` and `x || 0` (sema folded the rest):
	 * only x's truth is left (a tool's option that is off, beside a filter) */
	bool lhs_neutral = gen_is_known(node->lhs, node->op == OP_LAND);
	if (lhs_neutral || gen_is_known(node->rhs, node->op == OP_LAND)) {
		struct node *kept = lhs_neutral ? node->rhs : node->lhs;
		int x = gen_value_to_reg(gen, gen_expr(gen, kept));
		/* a comparison or a logical operation is already 0 or 1 */
		bool is_truth = (kept->kind == NODE_BINARY && kept->op >= OP_EQ && kept->op <= OP_LOR) ||
				(kept->kind == NODE_UNARY && kept->op == OP_LNOT);
		return value_reg(is_truth ? x : gen_test_imm(gen, BPF_JNE, x, 0), node->type);
	}
	int result = gen_const_reg(gen, node->op == OP_LOR ? 1 : 0);
	int done = ir_new_label(&gen->fn);
	int left = gen_value_to_reg(gen, gen_expr(gen, node->lhs));
	ir_jump_if_imm(&gen->fn, node->op == OP_LOR ? BPF_JNE : BPF_JEQ, left, 0, done);
	int right = gen_value_to_reg(gen, gen_expr(gen, node->rhs));
	ir_mov_imm(&gen->fn, result, node->op == OP_LOR ? 1 : 0);
	ir_jump_if_imm(&gen->fn, node->op == OP_LOR ? BPF_JNE : BPF_JEQ, right, 0, done);
	ir_mov_imm(&gen->fn, result, node->op == OP_LOR ? 0 : 1);
	ir_label(&gen->fn, done);
	return value_reg(result, node->type);
}

static int alu_op_for(enum op op)
{
	switch (op) {
	case OP_ADD: return BPF_ADD;
	case OP_SUB: return BPF_SUB;
	case OP_MUL: return BPF_MUL;
	case OP_DIV: return BPF_DIV;
	case OP_MOD: return BPF_MOD;
	case OP_BITAND: return BPF_AND;
	case OP_BITOR: return BPF_OR;
	case OP_BITXOR: return BPF_XOR;
	case OP_SHL: return BPF_LSH;
	case OP_SHR: return BPF_RSH;
	default: return BPF_ADD;
	}
}

/* left = left op right on registers, honouring signedness of result_type.
 * `site` is the binary or compound-assignment node (NULL for ++/--): when
 * its right operand is known only at run time, a zero divisor gives 1 and
 * bumps the site's counter (as current bpftrace does; BPF itself would give
 * 0 or the dividend), and a shift count outside 0..63 shifts every bit out
 * (BPF would mask the count to 6 bits), as C's arithmetic would suggest. */
void gen_arithmetic(struct codegen *gen, enum op op, int left, int right,
			   const struct type *result_type, const struct node *site)
{
	bool is_signed = result_type->kind == TYPE_INT && result_type->is_signed;
	bool checked = site && site->rhs && !site->rhs->is_constant;
	bool can_skip = checked && (op == OP_DIV || op == OP_MOD || op == OP_SHL ||
				    (op == OP_SHR && !is_signed));
	int done = can_skip ? ir_new_label(&gen->fn) : -1;
	if (checked && (op == OP_DIV || op == OP_MOD)) {
		int nonzero = ir_new_label(&gen->fn);
		ir_jump_if_imm(&gen->fn, BPF_JNE, right, 0, nonzero);
		if (site->check_id)
			gen_count_lost(gen, LOST_SLOT_ZERO_DIVISOR + site->check_id - 1);
		ir_mov_imm(&gen->fn, left, 1);
		ir_jump(&gen->fn, done);
		ir_label(&gen->fn, nonzero);
	}
	if (checked && (op == OP_SHL || op == OP_SHR)) {
		int in_range = ir_new_label(&gen->fn);
		ir_jump_if_imm(&gen->fn, BPF_JLE, right, 63, in_range);
		if (op == OP_SHR && is_signed) {
			ir_mov_imm(&gen->fn, right, 63); /* the sign fills every bit */
		} else {
			ir_mov_imm(&gen->fn, left, 0);
			ir_jump(&gen->fn, done);
		}
		ir_label(&gen->fn, in_range);
	}
	if ((op == OP_DIV || op == OP_MOD) && is_signed)
		gen_signed_divide(gen, left, right, op == OP_MOD);
	else if (op == OP_SHR && is_signed)
		ir_alu(&gen->fn, BPF_ARSH, left, right);
	else
		ir_alu(&gen->fn, alu_op_for(op), left, right);
	if (can_skip)
		ir_label(&gen->fn, done);
}

/* The address an operand of pointer arithmetic stands for: a pointer's
 * value, or where an array field sits in memory. */
static int address_of(struct codegen *gen, struct value value)
{
	if (value.kind == VALUE_ADDRESS)
		return value.reg;
	return gen_value_to_reg(gen, value);
}

/* p + n, n + p, p - n and p - q, as sema typed them (sema_operators.c). */
static struct value gen_pointer_arithmetic(struct codegen *gen, struct node *node,
					   struct value left, struct value right)
{
	bool left_is_address = node->lhs->type->kind != TYPE_INT;
	bool right_is_address = node->rhs->type->kind != TYPE_INT;
	int a = left_is_address ? address_of(gen, left) : gen_value_to_reg(gen, left);
	int b = right_is_address ? address_of(gen, right) : gen_value_to_reg(gen, right);
	int result = ir_new_vreg(&gen->fn);
	if (left_is_address && right_is_address) {
		int step = type_pointer_step(node->lhs->type->kind == TYPE_POINTER ? node->lhs->type
						     : type_pointer(node->lhs->type->pointee, false));
		ir_mov(&gen->fn, result, a);
		ir_alu(&gen->fn, BPF_SUB, result, b);
		if (step > 1)
			gen_signed_divide(gen, result, gen_const_reg(gen, step), false);
		return value_reg(result, node->type);
	}
	int count = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, count, left_is_address ? b : a);
	int step = type_pointer_step(node->type);
	if (step > 1)
		ir_alu_imm(&gen->fn, BPF_MUL, count, step);
	ir_mov(&gen->fn, result, left_is_address ? a : b);
	ir_alu(&gen->fn, node->op == OP_SUB ? BPF_SUB : BPF_ADD, result, count);
	return value_reg(result, node->type);
}

static bool is_scalar(const struct type *type)
{
	return type && (type->kind == TYPE_INT || type->kind == TYPE_POINTER);
}

bool gen_is_scalar_comparison(const struct node *node)
{
	return node->kind == NODE_BINARY && node->op >= OP_EQ && node->op <= OP_GE &&
	       is_scalar(node->lhs->type) && is_scalar(node->rhs->type);
}

/* A constant BPF can compare against as an immediate: it is sign-extended
 * to 64 bits, for the unsigned jumps too. */
static bool fits_immediate(const struct node *node)
{
	return node->is_constant && node->type && node->type->kind == TYPE_INT &&
	       (int64_t)node->const_value == (int32_t)node->const_value;
}

/* The jump taken when a op b is false: a op' b. */
static int negated_jump(int op)
{
	switch (op) {
	case BPF_JEQ: return BPF_JNE;
	case BPF_JNE: return BPF_JEQ;
	case BPF_JLT: return BPF_JGE;
	case BPF_JGE: return BPF_JLT;
	case BPF_JLE: return BPF_JGT;
	case BPF_JGT: return BPF_JLE;
	case BPF_JSLT: return BPF_JSGE;
	case BPF_JSGE: return BPF_JSLT;
	case BPF_JSLE: return BPF_JSGT;
	case BPF_JSGT: return BPF_JSLE;
	default: return op;
	}
}

/* The jump for b op' a when the operands trade places. */
static int mirrored_jump(int op)
{
	switch (op) {
	case BPF_JLT: return BPF_JGT;
	case BPF_JGT: return BPF_JLT;
	case BPF_JLE: return BPF_JGE;
	case BPF_JGE: return BPF_JLE;
	case BPF_JSLT: return BPF_JSGT;
	case BPF_JSGT: return BPF_JSLT;
	case BPF_JSLE: return BPF_JSGE;
	case BPF_JSGE: return BPF_JSLE;
	default: return op;
	}
}

/* Jumps to `label` when the integer comparison `node` is `when`: one
 * conditional jump, against an immediate when either side is a constant
 * that fits one (the constant goes right, the operator mirrored). `truth`,
 * unless -1, is set to 1 between the operands and the jump. */
static void comparison_jump(struct codegen *gen, struct node *node, bool when, int label, int truth)
{
	bool is_signed = is_signed_operand(node->lhs->type) && is_signed_operand(node->rhs->type);
	int op = jump_op_for(node->op, is_signed);
	if (!when)
		op = negated_jump(op);
	struct node *left = node->lhs, *right = node->rhs;
	if (fits_immediate(left) && !fits_immediate(right)) {
		left = node->rhs;
		right = node->lhs;
		op = mirrored_jump(op);
	}
	int a = gen_value_to_reg(gen, gen_expr(gen, left));
	int b = fits_immediate(right) ? -1 : gen_value_to_reg(gen, gen_expr(gen, right));
	if (truth >= 0)
		ir_mov_imm(&gen->fn, truth, 1);
	if (b < 0)
		ir_jump_if_imm(&gen->fn, op, a, (int32_t)right->const_value, label);
	else
		ir_jump_if(&gen->fn, op, a, b, label);
}

void gen_comparison_jump(struct codegen *gen, struct node *node, bool when, int label)
{
	comparison_jump(gen, node, when, label, -1);
}

/* The BPF operation that applies a constant right operand as an
 * immediate, where that gives what gen_arithmetic would (no signed
 * division, which it builds from unsigned ones; shifts within 0..63,
 * divisors above 0); -1 otherwise. */
static int immediate_alu_op(const struct node *node)
{
	if (!fits_immediate(node->rhs))
		return -1;
	int64_t value = (int64_t)node->rhs->const_value;
	bool is_signed = node->type->kind == TYPE_INT && node->type->is_signed;
	switch (node->op) {
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_BITAND: case OP_BITOR: case OP_BITXOR:
		return alu_op_for(node->op);
	case OP_SHL:
		return value >= 0 && value < 64 ? BPF_LSH : -1;
	case OP_SHR:
		return value >= 0 && value < 64 ? (is_signed ? BPF_ARSH : BPF_RSH) : -1;
	case OP_DIV: case OP_MOD:
		return !is_signed && value > 0 ? alu_op_for(node->op) : -1;
	default:
		return -1;
	}
}

struct value gen_binary(struct codegen *gen, struct node *node)
{
	if (node->op == OP_LAND || node->op == OP_LOR)
		return gen_logical(gen, node);
	if (gen_is_scalar_comparison(node)) {
		int result = ir_new_vreg(&gen->fn), done = ir_new_label(&gen->fn);
		comparison_jump(gen, node, true, done, result);
		ir_mov_imm(&gen->fn, result, 0);
		ir_label(&gen->fn, done);
		return value_reg(result, node->type);
	}
	struct value left = gen_expr(gen, node->lhs);
	struct value right = gen_expr(gen, node->rhs);
	if ((node->op == OP_ADD || node->op == OP_SUB) &&
	    (node->type->kind == TYPE_POINTER || node->lhs->type->kind == TYPE_POINTER ||
	     node->lhs->type->kind == TYPE_ARRAY))
		return gen_pointer_arithmetic(gen, node, left, right);
	if (node->lhs->type->kind == TYPE_ARRAY) {
		int a = gen_value_to_stack(gen, left, NULL), b = gen_value_to_stack(gen, right, NULL);
		int equal = gen_memory_equal(gen, a, b, node->lhs->type->size);
		if (node->op == OP_NE)
			ir_alu_imm(&gen->fn, BPF_XOR, equal, 1);
		return value_reg(equal, node->type);
	}
	if (node->lhs->type->kind == TYPE_BUFFER) {
		int a = gen_value_to_stack(gen, left, NULL), b = gen_value_to_stack(gen, right, NULL);
		int size = left.type->size < right.type->size ? left.type->size : right.type->size;
		int equal = gen_buffer_equal(gen, a, b, size - 8);
		if (node->op == OP_NE)
			ir_alu_imm(&gen->fn, BPF_XOR, equal, 1);
		return value_reg(equal, node->type);
	}
	if (left.kind == VALUE_STACK && right.kind == VALUE_STACK) {
		int limit = left.type->size < right.type->size ? left.type->size : right.type->size;
		int equal = gen_string_equal(gen, left, right, limit);
		if (node->op == OP_NE)
			ir_alu_imm(&gen->fn, BPF_XOR, equal, 1);
		return value_reg(equal, node->type);
	}
	int a = gen_value_to_reg(gen, left), b = gen_value_to_reg(gen, right);
	int result = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, result, a);
	int op = immediate_alu_op(node);
	if (op >= 0) /* (the constant's own register is then unused, and dropped) */
		ir_alu_imm(&gen->fn, op, result, (int32_t)node->rhs->const_value);
	else
		gen_arithmetic(gen, node->op, result, b, node->type, node);
	return value_reg(result, node->type);
}

struct value gen_unary(struct codegen *gen, struct node *node)
{
	int operand = gen_value_to_reg(gen, gen_expr(gen, node->lhs));
	int result = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, result, operand);
	switch (node->op) {
	case OP_NEG:
		ir_alu_imm(&gen->fn, BPF_NEG, result, 0);
		break;
	case OP_BITNOT:
		ir_alu_imm(&gen->fn, BPF_XOR, result, -1);
		break;
	case OP_LNOT: {
		int done = ir_new_label(&gen->fn);
		ir_mov_imm(&gen->fn, result, 1);
		ir_jump_if_imm(&gen->fn, BPF_JEQ, operand, 0, done);
		ir_mov_imm(&gen->fn, result, 0);
		ir_label(&gen->fn, done);
		break;
	}
	case OP_DEREF: {
		if (node->type->kind == TYPE_RECORD || node->type->kind == TYPE_ARRAY) {
			struct value object = { .kind = VALUE_ADDRESS, .reg = operand, .type = node->type,
						.is_user = node->lhs->type->is_user_pointer };
			return object;
		}
		int size = node->type->kind == TYPE_INT ? node->type->size : 8;
		int offset = gen_stack_alloc(gen, 8);
		ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)offset, 0);
		/* bare integers are read by address, like str() does */
		int read_helper = node->lhs->type->kind != TYPE_POINTER ? BPF_FUNC_probe_read
				  : node->lhs->type->is_user_pointer ? BPF_FUNC_probe_read_user
								     : BPF_FUNC_probe_read_kernel;
		struct helper_arg args[3] = { ARG_STACK(offset), ARG_IMM(size), ARG_REG(operand) };
		gen_call_helper(gen, read_helper, args, 3);
		return value_reg(gen_load_int(gen, BPF_REG_10, offset, size,
					  node->type->kind == TYPE_INT && node->type->is_signed), node->type);
	}
	default:
		break;
	}
	return value_reg(result, node->type);
}
