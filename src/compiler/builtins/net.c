/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builtin functions, family: Networking: addresses printed as text and read from text (IP and
 * MAC addresses), byte order.
 */
#include "family.h"

#include <arpa/inet.h>

static void check_ntop(struct sema *sema, struct node *call)
{
	for (struct node *arg = call->args; arg; arg = arg->next)
		sema_check_expr(sema, arg);
	struct type *inet = type_new(TYPE_INET);
	inet->size = 24;
	call->type = inet;
	struct node *address = call->args->next ? call->args->next : call->args;
	struct type *type = address->type;
	if (!type || type->kind == TYPE_NONE || sema_is_int(address))
		return;
	/* an address held in bytes: 4 for IPv4, 16 for IPv6 (in6_addr's u6_addr8) */
	bool bytes = type->kind == TYPE_STRING || (type->kind == TYPE_ARRAY && type->pointee &&
						   type->pointee->kind == TYPE_INT);
	if (!bytes || (type->size != 4 && type->size != 16))
		sema_error(sema, address->loc, "ntop() needs an IPv4 address as an integer, or 4 or 16 "
			 "address bytes; this is %s", type_name(type));
}

/* bswap(x): x with its bytes reversed, at x's own width */
static void check_bswap(struct sema *sema, struct node *call)
{
	sema_check_expr(sema, call->args);
	call->type = type_int(8, false);
	if (call->args->type && call->args->type->kind != TYPE_NONE && !sema_is_int(call->args)) {
		sema_error(sema, call->args->loc, "bswap() needs an integer, not %s",
			 type_name(call->args->type));
		return;
	}
	if (call->args->type && call->args->type->kind == TYPE_INT)
		call->type = type_int(call->args->type->size, false);
}

static struct value generate_ntop(struct codegen *gen, struct node *call)
{
	struct node *address = call->args->next ? call->args->next : call->args;
	int offset = gen_stack_alloc(gen, 24);
	gen_zero_stack(gen, offset, 24);
	bool is_bytes = !type_is_integer_like(address->type);
	int default_family = is_bytes && address->type->size == 16 ? 10 /* AF_INET6 */ : 2 /* AF_INET */;
	int family = call->args->next ? gen_value_to_reg(gen, gen_expr(gen, call->args))
				      : gen_const_reg(gen, default_family);
	ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)offset, family);
	struct value value = gen_expr(gen, address);
	if (!is_bytes) {
		ir_store(&gen->fn, 4, BPF_REG_10, (int16_t)(offset + 8), gen_value_to_reg(gen, value));
	} else if (value.kind == VALUE_ADDRESS) {
		struct helper_arg args[3] = { ARG_STACK(offset + 8), ARG_IMM(address->type->size),
					      ARG_REG(value.reg) };
		gen_call_helper(gen, value.is_user ? BPF_FUNC_probe_read_user : BPF_FUNC_probe_read_kernel,
			    args, 3);
	} else if (value.kind == VALUE_STACK) {
		gen_copy_memory(gen, BPF_REG_10, offset + 8, BPF_REG_10, value.stack_offset,
			    address->type->size);
	}
	return value_stack(offset, call->type);
}

static struct value generate_bswap(struct codegen *gen, struct node *call)
{
	int reg = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, reg, gen_value_to_reg(gen, gen_expr(gen, call->args)));
	int bits = call->type->size * 8;
	if (bits == 8)
		return value_reg(reg, call->type);
	/* on little-endian x86-64, "to big endian" is the byte swap */
	ir_emit(&gen->fn, (struct ir_insn){ .code = BPF_ALU | BPF_END | BPF_TO_BE, .dst = reg, .imm = bits });
	return value_reg(reg, call->type);
}

/* pton("addr"): the address's bytes, uint8[4] for IPv4 (a '.') or
 * uint8[16] for IPv6 (a ':'), worked out at compile time; comparable with
 * an address field such as args->daddr and printable with ntop() */
static void check_pton(struct sema *sema, struct node *call)
{
	struct node *text = call->args;
	call->type = type_none();
	if (text->kind != NODE_STRING) {
		sema_error(sema, text->loc, "pton() needs an address as a string literal");
		return;
	}
	unsigned char bytes[16];
	bool is_v6 = strchr(text->string_value, ':') != NULL;
	if (inet_pton(is_v6 ? AF_INET6 : AF_INET, text->string_value, bytes) != 1) {
		sema_error(sema, text->loc, "pton(): '%s' is not an IPv%d address", text->string_value,
			   is_v6 ? 6 : 4);
		return;
	}
	struct type *array = type_new(TYPE_ARRAY);
	array->pointee = type_int(1, false);
	array->array_length = is_v6 ? 16 : 4;
	array->size = array->array_length;
	call->type = array;
}

static struct value generate_pton(struct codegen *gen, struct node *call)
{
	unsigned char bytes[16];
	const char *text = call->args->string_value;
	bool is_v6 = call->type->size == 16;
	inet_pton(is_v6 ? AF_INET6 : AF_INET, text, bytes);
	return gen_string_constant(gen, (const char *)bytes, call->type->size, call->type);
}

/* macaddr(x): the six bytes at address x, or of a six-byte array (char
 * arrays are strings), held in an integer (the first byte lowest) that prints as
 * "DE:AD:BE:EF:0A:0B"; so it is a map key or value like any integer. */
static void check_macaddr(struct sema *sema, struct node *call)
{
	struct node *source = call->args;
	sema_check_expr(sema, source);
	call->type = type_named_int(&int_names_macaddr);
	struct type *type = source->type;
	if (!type || type->kind == TYPE_NONE || sema_is_int(source))
		return;
	bool bytes = type->kind == TYPE_ARRAY && type->pointee && type->pointee->kind == TYPE_INT &&
		     type->pointee->size == 1;
	if ((bytes || type->kind == TYPE_STRING) && type->size != 6)
		sema_error(sema, source->loc, "macaddr() needs 6 bytes; this is %s", type_name(type));
	else if (!bytes && type->kind != TYPE_STRING)
		sema_error(sema, source->loc, "macaddr() needs an address or a 6-byte array, not %s",
			   type_name(type));
}

static struct value generate_macaddr(struct codegen *gen, struct node *call)
{
	struct node *source = call->args;
	struct value value = gen_expr(gen, source);
	int slot = gen_stack_alloc(gen, 8);
	if (value.kind == VALUE_STACK) {
		gen_copy_memory(gen, BPF_REG_10, slot, BPF_REG_10, value.stack_offset, 8);
	} else {
		/* an address: a pointer says whose memory; an integer is the
		 * process's in a uprobe or after uptr(), else the kernel's */
		bool is_user = value.kind == VALUE_ADDRESS ? value.is_user
			       : source->type->is_user_pointer ||
					 (source->type->kind != TYPE_POINTER && gen->point->provider->user_space);
		int address = value.kind == VALUE_ADDRESS ? value.reg : gen_value_to_reg(gen, value);
		ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)slot, 0);
		struct helper_arg args[3] = { ARG_STACK(slot), ARG_IMM(6), ARG_REG(address) };
		gen_call_helper(gen, is_user ? BPF_FUNC_probe_read_user : BPF_FUNC_probe_read_kernel, args, 3);
	}
	/* the six bytes alone: the padding after an array's copy dropped */
	int reg = gen_load_int(gen, BPF_REG_10, slot, 8, false);
	ir_alu_imm(&gen->fn, BPF_LSH, reg, 16);
	ir_alu_imm(&gen->fn, BPF_RSH, reg, 16);
	return value_reg(reg, call->type);
}

const struct function_def builtins_net[] = {
	{ FUNCTION(ntop, 1, 2) },
	{ FUNCTION(bswap, 1, 1) },
	{ FUNCTION(pton, 1, 1) },
	{ FUNCTION(macaddr, 1, 1) },
	{ 0 },
};
