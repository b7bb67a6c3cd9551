/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Semantic analysis of operators: C's rules for integers, all arithmetic
 * in 64 bits; strings and integer arrays compared for equality; pointer
 * arithmetic in whole elements; unary operators and dereferences. Integer
 * operations on constants are folded here, so a tool's options that are
 * off leave no code behind.
 */
#include "sema_internal.h"

#include <string.h>

#include "../kernel/btf.h"
#include "builtins/builtins.h"

/* Folds arithmetic on two integer constants, so lhist(x, -10, 10, 1) and
 * unroll(2 * 3) see plain numbers. Division by zero and out-of-range
 * shifts are not folded: sema_check_operand_range reports them. */
static void fold_binary(struct node *node)
{
	if (!node->lhs->is_constant || !node->rhs->is_constant ||
	    node->lhs->type->kind != TYPE_INT || node->rhs->type->kind != TYPE_INT)
		return;
	uint64_t a = node->lhs->const_value, b = node->rhs->const_value;
	bool is_signed = node->type->is_signed;
	uint64_t value;
	switch (node->op) {
	case OP_ADD: value = a + b; break;
	case OP_SUB: value = a - b; break;
	case OP_MUL: value = a * b; break;
	case OP_DIV:
	case OP_MOD:
		if (b == 0 || (is_signed && (int64_t)b == -1))
			return;
		if (is_signed)
			value = node->op == OP_DIV ? (uint64_t)((int64_t)a / (int64_t)b)
						   : (uint64_t)((int64_t)a % (int64_t)b);
		else
			value = node->op == OP_DIV ? a / b : a % b;
		break;
	case OP_BITAND: value = a & b; break;
	case OP_BITOR: value = a | b; break;
	case OP_BITXOR: value = a ^ b; break;
	case OP_SHL:
	case OP_SHR:
		if (b >= 64) /* an error (sema_check_operand_range) */
			return;
		value = node->op == OP_SHL ? a << b : is_signed ? (uint64_t)((int64_t)a >> b) : a >> b;
		break;
	default:
		return;
	}
	node->is_constant = true;
	node->const_value = value;
}

/* Folds comparisons and && / || whose outcome is known at compile time. A
 * tool's options are such constants: `PID == 0 || pid == PID` is then
 * true, and the code generator emits nothing for a filter that is off. */
static void fold_condition(struct node *node)
{
	bool left_known = node->lhs->is_constant && node->lhs->type->kind == TYPE_INT;
	bool right_known = node->rhs->is_constant && node->rhs->type->kind == TYPE_INT;
	uint64_t a = node->lhs->const_value, b = node->rhs->const_value;
	if (node->op == OP_LAND || node->op == OP_LOR) {
		bool decides = node->op == OP_LAND ? a == 0 : a != 0;
		if (left_known && (decides || right_known)) {
			node->is_constant = true;
			node->const_value = decides ? node->op == OP_LOR : b != 0;
		}
		return;
	}
	if (!left_known || !right_known)
		return;
	bool is_signed = node->lhs->type->is_signed && node->rhs->type->is_signed;
	bool less = is_signed ? (int64_t)a < (int64_t)b : a < b;
	bool value;
	switch (node->op) {
	case OP_EQ: value = a == b; break;
	case OP_NE: value = a != b; break;
	case OP_LT: value = less; break;
	case OP_GE: value = !less; break;
	case OP_GT: value = !less && a != b; break;
	case OP_LE: value = less || a == b; break;
	default: return;
	}
	node->is_constant = true;
	node->const_value = value;
}

/* `@a = @a + 1` as the map's only write: in the silent pass the map has no
 * type yet when the read is checked. An operand of arithmetic can only be an
 * integer, and a map read before any write reads zero (as in bpftrace), so
 * the read is typed int64 and the assignment can then type the map. */
static void assume_untyped_map_int(struct sema *sema, struct node *operand)
{
	if (sema->report || operand->kind != NODE_MAP || !operand->type ||
	    operand->type->kind != TYPE_NONE || operand->map_id < 0 ||
	    operand->map_id >= sema->program->maps.count ||
	    sema->program->maps.items[operand->map_id].value_type)
		return;
	operand->type = type_int(8, true);
}

/* `x / 0`, `x % 0` and shifts by a constant outside 0..63 are errors (C
 * leaves them undefined; BPF would give 0, x or a masked shift). A divisor
 * known only at run time gets a check site: the code then uses 1 as the
 * result and counts the event, and the runtime warns where it happened. */
void sema_check_operand_range(struct sema *sema, struct node *node, enum op op, struct node *rhs,
				struct src_loc loc)
{
	if (!rhs->type || rhs->type->kind != TYPE_INT)
		return;
	if (op == OP_DIV || op == OP_MOD) {
		if (rhs->is_constant && rhs->const_value == 0) {
			sema_error(sema, loc, "%s by zero", op == OP_DIV ? "division" : "remainder");
		} else if (!rhs->is_constant && node->check_id == 0) {
			vec_push(&sema->program->zero_divisors, loc);
			node->check_id = sema->program->zero_divisors.count;
		}
	} else if ((op == OP_SHL || op == OP_SHR) && rhs->is_constant && rhs->const_value >= 64) {
		sema_error(sema, loc, "shift by %lld: the count must be 0 to 63",
			 (long long)rhs->const_value);
	}
}

/* Whether the object a field or element chain reads lives in the traced
 * process (it was reached through a user pointer). */
static bool memory_is_user(const struct node *node)
{
	while (node->kind == NODE_FIELD || node->kind == NODE_INDEX) {
		const struct type *base = node->lhs->type;
		if (base && base->kind == TYPE_POINTER)
			return base->is_user_pointer;
		node = node->lhs;
	}
	if (node->kind == NODE_UNARY && node->op == OP_DEREF && node->lhs->type)
		return node->lhs->type->is_user_pointer;
	return false;
}

/* The pointer an operand of + or - stands for: a pointer itself, or an
 * array field read through memory, which decays to the address of its first
 * element as in C. An array held in a variable or a tuple is a copy on the
 * BPF stack and has no address worth keeping: NULL, as for integers. */
static struct type *address_type(struct node *operand, bool may_retype)
{
	/* curtask + n is typed as the pointer curtask is (as `*curtask` does);
	 * x - curtask stays integer arithmetic */
	if (may_retype && operand->kind == NODE_BUILTIN && operand->variable &&
	    operand->variable->points_to && operand->variable->points_to())
		operand->type = operand->variable->points_to();
	struct type *type = operand->type;
	if (type->kind == TYPE_POINTER) {
		if (type->pointee && type->pointee->kind == TYPE_RECORD && type->pointee->is_incomplete)
			btf_complete_record(type->pointee);
		return type;
	}
	bool reads_memory = operand->kind == NODE_FIELD &&
			    !(operand->lhs->kind == NODE_BUILTIN && operand->lhs->variable &&
			      operand->lhs->variable->generate_field);
	if (type->kind == TYPE_ARRAY && type->pointee && reads_memory)
		return type_pointer(type->pointee, memory_is_user(operand));
	return NULL;
}

/* p + n, n + p and p - n move an address by n whole elements and keep p's
 * type; p - q counts the elements between two addresses of one type.
 * Returns false when neither operand is an address. */
static bool check_pointer_arithmetic(struct sema *sema, struct node *node)
{
	if (node->op != OP_ADD && node->op != OP_SUB)
		return false;
	struct type *left = address_type(node->lhs, true);
	struct type *right = address_type(node->rhs, node->op == OP_ADD);
	if (!left && !right)
		return false;
	node->type = type_none();
	if (left && right) {
		if (node->op == OP_ADD)
			sema_error(sema, node->loc, "cannot add two pointers (%s and %s)", type_name(left),
				   type_name(right));
		else if (type_pointer_step(left) != type_pointer_step(right) ||
			 !type_equal(left->pointee, right->pointee))
			sema_error(sema, node->loc, "cannot subtract %s from %s: they point to different "
				   "types", type_name(right), type_name(left));
		else
			node->type = type_int(8, true);
		return true;
	}
	struct node *count = left ? node->rhs : node->lhs;
	if (count->type->kind != TYPE_INT)
		sema_error(sema, node->loc, "cannot apply '%s' to %s and %s", op_spelling(node->op),
			   type_name(node->lhs->type), type_name(node->rhs->type));
	else if (right && node->op == OP_SUB)
		sema_error(sema, node->loc, "cannot subtract a pointer (%s) from an integer",
			   type_name(right));
	else
		node->type = left ? left : right;
	return true;
}

void sema_check_binary(struct sema *sema, struct node *node)
{
	sema_check_expr(sema, node->lhs);
	sema_check_expr(sema, node->rhs);
	assume_untyped_map_int(sema, node->lhs);
	assume_untyped_map_int(sema, node->rhs);
	struct type *left = node->lhs->type, *right = node->rhs->type;
	if (!left || !right || left->kind == TYPE_NONE || right->kind == TYPE_NONE) {
		node->type = type_none();
		return;
	}
	bool comparison = node->op >= OP_EQ && node->op <= OP_GE;
	if (sema_is_string(node->lhs) || sema_is_string(node->rhs)) {
		if (!(sema_is_string(node->lhs) && sema_is_string(node->rhs))) {
			sema_error(sema, node->loc, "cannot apply '%s' to %s and %s", op_spelling(node->op),
				 type_name(left), type_name(right));
		} else if (node->op != OP_EQ && node->op != OP_NE) {
			sema_error(sema, node->loc, "strings can only be compared with == and !=");
		}
		node->type = type_int(8, false);
		if (node->lhs->kind == NODE_STRING && node->rhs->kind == NODE_STRING) {
			bool equal = strcmp(node->lhs->string_value, node->rhs->string_value) == 0;
			node->is_constant = true;
			node->const_value = node->op == OP_EQ ? equal : !equal;
		}
		return;
	}
	if (check_pointer_arithmetic(sema, node))
		return;
	if (left->kind == TYPE_BUFFER || right->kind == TYPE_BUFFER) {
		/* buf() values: equal when their lengths and bytes are */
		if (node->op != OP_EQ && node->op != OP_NE)
			sema_error(sema, node->loc, "buffers can only be compared with == and !=");
		else if (left->kind != right->kind)
			sema_error(sema, node->loc, "cannot compare %s and %s", type_name(left),
				   type_name(right));
		node->type = type_int(8, false);
		return;
	}
	if (left->kind == TYPE_ARRAY || right->kind == TYPE_ARRAY) {
		/* element by element, as bpftrace compares arrays of integers */
		if (node->op != OP_EQ && node->op != OP_NE)
			sema_error(sema, node->loc, "arrays can only be compared with == and !=");
		else if (!type_equal(left, right) || !left->pointee || left->pointee->kind != TYPE_INT)
			sema_error(sema, node->loc, "cannot compare %s and %s: only integer arrays of the "
				 "same type and length", type_name(left), type_name(right));
		node->type = type_int(8, false);
		return;
	}
	if (!sema_is_int(node->lhs) || !sema_is_int(node->rhs)) {
		sema_error(sema, node->loc, "cannot apply '%s' to %s and %s", op_spelling(node->op),
			 type_name(left), type_name(right));
		node->type = type_none();
		return;
	}
	if (comparison || node->op == OP_LAND || node->op == OP_LOR) {
		node->type = type_int(8, false);
		fold_condition(node);
		return;
	}
	/* C's usual conversions with every operand widened to 64 bits: the
	 * result is unsigned only when an unsigned 64-bit operand takes part. */
	bool left_unsigned = left->kind == TYPE_POINTER || (!left->is_signed && left->size == 8);
	bool right_unsigned = right->kind == TYPE_POINTER || (!right->is_signed && right->size == 8);
	if (node->op == OP_SHL || node->op == OP_SHR)
		right_unsigned = false;
	node->type = type_int(8, !(left_unsigned || right_unsigned));
	sema_check_operand_range(sema, node, node->op, node->rhs, node->loc);
	fold_binary(node);
}

void sema_check_unary(struct sema *sema, struct node *node)
{
	sema_check_expr(sema, node->lhs);
	if (!node->lhs->type || node->lhs->type->kind == TYPE_NONE) {
		node->type = type_none();
		return;
	}
	switch (node->op) {
	case OP_LNOT:
		if (!sema_is_int(node->lhs))
			sema_error(sema, node->loc, "cannot apply '!' to %s", type_name(node->lhs->type));
		node->type = type_bool(); /* current bpftrace: !x is a bool */
		if (node->lhs->is_constant && node->lhs->type->kind == TYPE_INT) {
			node->is_constant = true;
			node->const_value = node->lhs->const_value == 0;
		}
		return;
	case OP_NEG:
	case OP_BITNOT:
		if (!sema_is_int(node->lhs)) {
			sema_error(sema, node->loc, "cannot apply '%s' to %s", op_spelling(node->op),
				 type_name(node->lhs->type));
			node->type = type_none();
			return;
		}
		node->type = type_int(8, node->op == OP_NEG ? true : node->lhs->type->is_signed);
		if (node->lhs->is_constant && node->lhs->type->kind == TYPE_INT) {
			node->is_constant = true;
			node->const_value = node->op == OP_NEG ? -node->lhs->const_value : ~node->lhs->const_value;
		}
		return;
	case OP_DEREF:
		if (node->lhs->kind == NODE_BUILTIN && node->lhs->variable &&
		    node->lhs->variable->points_to && node->lhs->variable->points_to())
			node->lhs->type = node->lhs->variable->points_to();
		if (node->lhs->type->kind == TYPE_POINTER && node->lhs->type->pointee &&
		    (node->lhs->type->pointee->kind == TYPE_RECORD ||
		     node->lhs->type->pointee->kind == TYPE_POINTER)) {
			node->type = node->lhs->type->pointee;
			if (node->type->kind == TYPE_RECORD && node->type->is_incomplete)
				btf_complete_record(node->type);
			return;
		}
		if (node->lhs->type->kind != TYPE_POINTER && node->lhs->type->kind != TYPE_INT) {
			sema_error(sema, node->loc, "cannot dereference %s", type_name(node->lhs->type));
			node->type = type_none();
			return;
		}
		if (node->lhs->type->kind == TYPE_POINTER && node->lhs->type->pointee &&
		    node->lhs->type->pointee->kind == TYPE_INT)
			node->type = node->lhs->type->pointee;
		else
			node->type = type_int(8, true);
		return;
	default:
		sema_error(sema, node->loc, "operator '%s' is not supported here", op_spelling(node->op));
		node->type = type_none();
		return;
	}
}
