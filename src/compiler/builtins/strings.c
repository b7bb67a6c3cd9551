/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builtin functions, family: Strings and buffers: reading a string or raw bytes out of memory, comparing
 * strings, their length, and searching one in another.
 */
#include "family.h"

/* The text of str($N) or str($N + k) (bpftrace's pointer arithmetic on a
 * positional parameter: its text from byte k on), else NULL. */
static const char *positional_text(const struct compile_options *options, const struct node *source)
{
	uint64_t skip = 0;
	if (source->kind == NODE_BINARY && source->op == OP_ADD && source->lhs->kind == NODE_POSITIONAL &&
	    source->rhs->kind == NODE_INT) {
		skip = source->rhs->int_value;
		source = source->lhs;
	}
	if (source->kind != NODE_POSITIONAL)
		return NULL;
	int index = (int)source->int_value;
	const char *text = index >= 1 && index <= options->positional_count
				   ? options->positional[index - 1] : "";
	return skip < strlen(text) ? text + skip : "";
}

static void check_str(struct sema *sema, struct node *call)
{
	struct node *source = call->args, *length = source->next;
	call->type = type_string(sema->options->max_strlen);
	const char *text = positional_text(sema->options, source);
	if (text) {
		int text_length = (int)strlen(text);
		if (source->kind == NODE_BINARY) {
			const char *whole = positional_text(sema->options, source->lhs);
			if (source->rhs->int_value > strlen(whole))
				sema_error(sema, source->loc, "str($%d + %llu) is past the end of $%d ('%s' has "
					   "%zu bytes)", (int)source->lhs->int_value,
					   (unsigned long long)source->rhs->int_value,
					   (int)source->lhs->int_value, whole, strlen(whole));
		}
		if (length) {
			sema_check_expr(sema, length);
			if (!sema_is_int_constant(length))
				sema_error(sema, length->loc, "str()'s length must be a constant for a "
					   "positional parameter");
			else if (length->const_value < (uint64_t)text_length)
				text_length = (int)length->const_value;
		}
		if (text_length > sema->options->max_strlen - 1)
			text_length = sema->options->max_strlen - 1;
		call->type = type_string(text_length + 1);
		return;
	}
	sema_check_expr(sema, source);
	if (length) {
		sema_check_expr(sema, length);
		if (length->type && length->type->kind != TYPE_NONE && !sema_is_int(length))
			sema_error(sema, length->loc, "str()'s length must be an integer");
		else if (sema_is_int_constant(length) && length->const_value + 1 < (uint64_t)sema->options->max_strlen)
			call->type = type_string((int)length->const_value + 1);
	}
	if (source->type && source->type->kind == TYPE_STRING) {
		/* str(s, n) of a string keeps its first n bytes, as str(p, n) reads
		 * n bytes; n past the string changes nothing */
		call->type = source->type;
		if (length && length->type && sema_is_int(length) && !sema_is_int_constant(length))
			sema_error(sema, length->loc, "str() of a string takes a constant length");
		else if (length && sema_is_int_constant(length) &&
			 length->const_value + 1 < (uint64_t)source->type->size)
			call->type = type_string((int)length->const_value + 1);
		return;
	}
	if (source->type && source->type->kind != TYPE_NONE && !sema_is_int(source))
		sema_error(sema, source->loc, "str() needs a pointer or integer address, not %s",
			 type_name(source->type));
}

/* buf(pointer[, length]): bytes printed with %r as escaped text */
static void check_buf(struct sema *sema, struct node *call)
{
	struct node *source = call->args, *length = source->next;
	sema_check_expr(sema, source);
	int capacity = sema->options->max_strlen;
	/* an array is read whole unless told otherwise, as in bpftrace */
	if (!length && source->type && source->type->kind == TYPE_ARRAY &&
	    source->type->size > 0 && source->type->size < capacity)
		capacity = source->type->size;
	if (length) {
		sema_check_expr(sema, length);
		if (length->type && length->type->kind != TYPE_NONE && !sema_is_int(length)) {
			sema_error(sema, length->loc, "buf()'s length must be an integer");
		} else if (length->is_constant && (int64_t)length->const_value < 0) {
			sema_error(sema, length->loc, "buf()'s length must not be negative, not %lld",
				 (long long)length->const_value);
		} else if (length->is_constant && length->const_value < (uint64_t)capacity) {
			capacity = (int)length->const_value;
		} else if (length->is_constant && length->const_value > (uint64_t)capacity &&
			   sema->report && !call->warned) {
			/* bpftrace warns the same way */
			call->warned = true;
			diag_warning(sema->diag, length->loc, "buf() reads at most %d bytes (SONDE_MAX_STRLEN), "
				     "not %llu", capacity, (unsigned long long)length->const_value);
		}
	}
	struct type *type = type_new(TYPE_BUFFER);
	type->size = 8 + ((capacity + 7) & ~7);
	call->type = type;
	if (source->type && source->type->kind != TYPE_NONE && !sema_is_int(source) &&
	    source->type->kind != TYPE_STRING && source->type->kind != TYPE_ARRAY)
		sema_error(sema, source->loc, "buf() needs a pointer or an array, not %s",
			 type_name(source->type));
}

/* No string is longer than SONDE_MAX_STRLEN allows (1024): a bigger length
 * is a mistake, and one that does not fit an int would wrap. */
#define STRNCMP_LENGTH_MAX 1024

static void check_strncmp(struct sema *sema, struct node *call)
{
	struct node *a = call->args, *b = a->next, *n = b->next;
	sema_check_expr(sema, a);
	sema_check_expr(sema, b);
	sema_check_expr(sema, n);
	call->type = type_int(8, true);
	if ((a->type && a->type->kind != TYPE_NONE && !sema_is_string(a)) ||
	    (b->type && b->type->kind != TYPE_NONE && !sema_is_string(b)))
		sema_error(sema, call->loc, "strncmp() compares two strings");
	if (!sema_is_int_constant(n))
		sema_error(sema, n->loc, "strncmp()'s length must be a constant integer");
	else if (n->const_value > STRNCMP_LENGTH_MAX) /* negative ones too */
		sema_error(sema, n->loc, "strncmp()'s length must be 0 to %d, not %lld", STRNCMP_LENGTH_MAX,
			 (long long)n->const_value);
}

/* Reads the string at `address` into the stack at `offset`, zeroed first. */
static void str_read(struct codegen *gen, struct node *call, int address, int offset)
{
	struct node *source = call->args;
	/* a typed pointer says whose memory it points into, and so does an
	 * integer passed through uptr(); a bare integer (argN of a uprobe, a
	 * USDT argument) does not, so it is read with the helper that decides
	 * by address, as bpftrace does on x86-64 */
	int read_helper = source->type->is_user_pointer ? BPF_FUNC_probe_read_user_str
			  : source->type->kind != TYPE_POINTER ? BPF_FUNC_probe_read_str
							       : BPF_FUNC_probe_read_kernel_str;
	int size = call->type->size;
	gen_zero_stack(gen, offset, size);
	int length;
	if (source->next && !source->next->is_constant) {
		/* runtime length: clamp to the buffer, plus one for the NUL */
		length = gen_value_to_reg(gen, gen_expr(gen, source->next));
		ir_alu_imm(&gen->fn, BPF_ADD, length, 1);
		int fits = ir_new_label(&gen->fn);
		ir_jump_if_imm(&gen->fn, BPF_JLE, length, size, fits);
		ir_mov_imm(&gen->fn, length, size);
		ir_label(&gen->fn, fits);
	} else {
		length = gen_const_reg(gen, size);
	}
	/* str(0) is "" without a read: the helper would take a page fault on
	 * address 0 (microseconds each; execsnoop's unused argument slots) */
	int skip = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, address, 0, skip);
	struct helper_arg args[3] = { ARG_STACK(offset), ARG_REG(length), ARG_REG(address) };
	gen_call_helper(gen, read_helper, args, 3);
	ir_label(&gen->fn, skip);
}

static struct value generate_str(struct codegen *gen, struct node *call)
{
	struct node *source = call->args;
	const char *text = positional_text(gen->sema->options, source);
	if (text)
		return gen_string_constant(gen, text, call->type->size - 1, call->type);
	struct value value = gen_expr(gen, source);
	if (value.kind == VALUE_STACK) {
		if (type_equal(value.type, call->type))
			return value;
		int offset = gen_stack_alloc(gen, call->type->size);
		gen_store_value(gen, value, BPF_REG_10, offset, call->type);
		if (call->type->size < value.type->size) {
			/* str(s, n) shorter than s: the NUL at n, zeros after it in its word */
			int last = call->type->size - 1, word = last & ~7;
			int reg = gen_load_int(gen, BPF_REG_10, offset + word, 8, false);
			int mask = ir_new_vreg(&gen->fn);
			ir_mov_imm(&gen->fn, mask, last == word ? 0 : (int64_t)((1ULL << (8 * (last - word))) - 1));
			ir_alu(&gen->fn, BPF_AND, reg, mask);
			ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)(offset + word), reg);
		}
		return value_stack(offset, call->type);
	}
	int offset = gen_stack_alloc(gen, call->type->size);
	str_read(gen, call, gen_value_to_reg(gen, value), offset);
	return value_stack(offset, call->type);
}

/* str(p[, n]) of an address (not a positional parameter, not a string
 * already) read straight into a tuple's field: execsnoop's tuple of twenty
 * arguments needs no temporary per argument. */
static bool generate_into_str(struct codegen *gen, struct node *call, int offset)
{
	struct node *source = call->args;
	if (positional_text(gen->sema->options, source) ||
	    (source->type->kind != TYPE_POINTER && source->type->kind != TYPE_INT))
		return false;
	str_read(gen, call, gen_value_to_reg(gen, gen_expr(gen, source)), offset);
	return true;
}

/* buf(p, n): u64 length, then up to the type's capacity of bytes */
static struct value generate_buf(struct codegen *gen, struct node *call)
{
	struct node *source = call->args, *length_node = source->next;
	int capacity = call->type->size - 8;
	int slot = gen_stack_alloc(gen, call->type->size);
	gen_zero_stack(gen, slot, call->type->size);
	struct value value = gen_expr(gen, source);
	int length;
	if (length_node && !length_node->is_constant) {
		length = gen_value_to_reg(gen, gen_expr(gen, length_node));
		int fits = ir_new_label(&gen->fn);
		ir_jump_if_imm(&gen->fn, BPF_JLE, length, capacity, fits);
		ir_mov_imm(&gen->fn, length, capacity);
		ir_label(&gen->fn, fits);
	} else {
		/* capacity is rounded up to 8; the length is what was asked for,
		 * or a whole array */
		int64_t wanted = length_node ? (int64_t)length_node->const_value
				 : source->type->kind == TYPE_ARRAY ? source->type->size : capacity;
		length = gen_const_reg(gen, wanted < capacity ? wanted : capacity);
	}
	ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)slot, length);
	if (value.kind == VALUE_STACK) {
		gen_copy_memory(gen, BPF_REG_10, slot + 8, BPF_REG_10, value.stack_offset,
			    value.type->size < capacity ? value.type->size : capacity);
		return value_stack(slot, call->type);
	}
	/* a user pointer, or an integer passed through uptr() */
	bool is_user = value.kind == VALUE_ADDRESS ? value.is_user : source->type->is_user_pointer;
	int address = value.kind == VALUE_ADDRESS ? value.reg : gen_value_to_reg(gen, value);
	/* the verifier wants a length it can bound: mask it into [0, capacity] */
	int bounded = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, bounded, length);
	int in_range = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JLE, bounded, capacity, in_range);
	ir_mov_imm(&gen->fn, bounded, capacity);
	ir_label(&gen->fn, in_range);
	struct helper_arg args[3] = { ARG_STACK(slot + 8), ARG_REG(bounded), ARG_REG(address) };
	gen_call_helper(gen, is_user ? BPF_FUNC_probe_read_user : BPF_FUNC_probe_read_kernel, args, 3);
	return value_stack(slot, call->type);
}

static struct value generate_strncmp(struct codegen *gen, struct node *call)
{
	struct value a = gen_expr(gen, call->args), b = gen_expr(gen, call->args->next);
	int limit = (int)call->args->next->next->const_value;
	if (limit > a.type->size)
		limit = a.type->size;
	if (limit > b.type->size)
		limit = b.type->size;
	int equal = gen_string_equal(gen, a, b, limit);
	ir_alu_imm(&gen->fn, BPF_XOR, equal, 1); /* strncmp: 0 when equal */
	return value_reg(equal, call->type);
}

/* strlen(s) and strcontains(haystack, needle) take strings (a char * is
 * str(p) first, as in bpftrace 0.17). */
static void check_string_args(struct sema *sema, struct node *call)
{
	call->type = type_int(8, false);
	for (struct node *arg = call->args; arg; arg = arg->next) {
		sema_check_expr(sema, arg);
		if (arg->type && arg->type->kind != TYPE_NONE && !sema_is_string(arg))
			sema_error(sema, arg->loc, "%s() needs a string, not %s (str() reads one from an "
				   "address)", call->name, type_name(arg->type));
	}
}

static void check_strlen(struct sema *sema, struct node *call)
{
	check_string_args(sema, call);
	if (call->args->kind == NODE_STRING) {
		call->is_constant = true;
		call->const_value = strlen(call->args->string_value);
	}
}

/* The bytes before the first NUL: one compare per byte of the buffer, no loop. */
static struct value generate_strlen(struct codegen *gen, struct node *call)
{
	struct value text = gen_expr(gen, call->args);
	if (call->is_constant)
		return value_reg(gen_const_reg(gen, (int64_t)call->const_value), call->type);
	int length = gen_const_reg(gen, 0), done = ir_new_label(&gen->fn);
	int byte = ir_new_vreg(&gen->fn);
	for (int i = 0; i < text.type->size; i++) {
		ir_load(&gen->fn, 1, byte, BPF_REG_10, (int16_t)(text.stack_offset + i));
		ir_jump_if_imm(&gen->fn, BPF_JEQ, byte, 0, done);
		ir_mov_imm(&gen->fn, length, i + 1);
	}
	ir_label(&gen->fn, done);
	return value_reg(length, call->type);
}

/* What strcontains() may unroll: a 64-byte haystack and a needle of the
 * same size take 4096 comparisons; past these sizes the verifier gives up
 * ("sequence of jumps is too complex") or the jumps outgrow 16 bits. */
#define STRCONTAINS_COMPARES_MAX 4096
#define STRCONTAINS_HAYSTACK_MAX 128

/* The needle's bytes when it is a literal, so they become immediates. */
static const char *literal_needle(const struct node *call)
{
	const struct node *needle = call->args->next;
	return needle->kind == NODE_STRING ? needle->string_value : NULL;
}

static void check_strcontains(struct sema *sema, struct node *call)
{
	check_string_args(sema, call);
	struct node *haystack = call->args, *needle = haystack->next;
	if (haystack->kind == NODE_STRING && needle->kind == NODE_STRING) {
		call->is_constant = true;
		call->const_value = strstr(haystack->string_value, needle->string_value) != NULL;
		return;
	}
	if (!sema_is_string(haystack) || !sema_is_string(needle))
		return;
	const char *literal = literal_needle(call);
	long needle_bytes = literal ? (long)strlen(literal) : needle->type->size;
	if (haystack->type->size > STRCONTAINS_HAYSTACK_MAX ||
	    (long)haystack->type->size * needle_bytes > STRCONTAINS_COMPARES_MAX)
		sema_error(sema, call->loc, "strcontains() of a %d-byte string and a %ld-byte needle is "
			   "too big to search in BPF (at most a %d-byte string and %d byte comparisons; "
			   "str(p, n) or a literal needle make them smaller)", haystack->type->size,
			   needle_bytes, STRCONTAINS_HAYSTACK_MAX, STRCONTAINS_COMPARES_MAX);
}

/*
 * strcontains(haystack, needle), unrolled: at each starting point the
 * needle's bytes are compared in turn (as immediates when the needle is a
 * literal); a NUL in the needle means found, a difference moves on, a NUL
 * at the starting point means not found. The verifier sees only forward
 * jumps, so it needs no loop bounds.
 */
static struct value generate_strcontains(struct codegen *gen, struct node *call)
{
	struct value haystack = gen_expr(gen, call->args);
	struct value needle = gen_expr(gen, call->args->next);
	if (call->is_constant)
		return value_reg(gen_const_reg(gen, (int64_t)call->const_value), call->type);
	const char *literal = literal_needle(call);
	int needle_size = literal ? (int)strlen(literal) + 1 : needle.type->size;
	int hay_size = haystack.type->size;
	int result = gen_const_reg(gen, 0);
	int found = ir_new_label(&gen->fn), done = ir_new_label(&gen->fn);
	int seen = ir_new_vreg(&gen->fn), wanted = ir_new_vreg(&gen->fn);
	for (int start = 0; start < hay_size; start++) {
		int next = ir_new_label(&gen->fn);
		for (int k = 0; k < needle_size; k++) {
			if (literal && !literal[k]) {
				ir_jump(&gen->fn, found);
				break;
			}
			if (!literal) {
				ir_load(&gen->fn, 1, wanted, BPF_REG_10, (int16_t)(needle.stack_offset + k));
				ir_jump_if_imm(&gen->fn, BPF_JEQ, wanted, 0, found);
			}
			if (start + k >= hay_size) {
				ir_jump(&gen->fn, done); /* the needle is longer than what is left */
				break;
			}
			ir_load(&gen->fn, 1, seen, BPF_REG_10, (int16_t)(haystack.stack_offset + start + k));
			if (literal)
				ir_jump_if_imm(&gen->fn, BPF_JNE, seen, (unsigned char)literal[k], next);
			else
				ir_jump_if(&gen->fn, BPF_JNE, seen, wanted, next);
			if (k == needle_size - 1)
				ir_jump(&gen->fn, found); /* a full buffer matched */
		}
		ir_label(&gen->fn, next);
		ir_load(&gen->fn, 1, seen, BPF_REG_10, (int16_t)(haystack.stack_offset + start));
		ir_jump_if_imm(&gen->fn, BPF_JEQ, seen, 0, done);
	}
	ir_jump(&gen->fn, done);
	ir_label(&gen->fn, found);
	ir_mov_imm(&gen->fn, result, 1);
	ir_label(&gen->fn, done);
	return value_reg(result, call->type);
}

const struct function_def builtins_strings[] = {
	{ FUNCTION(str, 1, 2), .generate_into = generate_into_str },
	{ FUNCTION(strncmp, 3, 3) },
	{ FUNCTION(buf, 1, 2) },
	{ FUNCTION(strlen, 1, 1) },
	{ FUNCTION(strcontains, 2, 2) },
	{ 0 },
};
