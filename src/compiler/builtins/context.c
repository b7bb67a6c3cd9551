/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builtin variables and functions, family: the probe's context. `args` (a
 * tracepoint's record, a function's typed arguments), arg0..arg15, retval,
 * the names `probe` and `func`, the context pointer `ctx`, `usermode`, and
 * reg("name"), a saved register. Where each argument lives is the
 * provider's answer (probe_point: args_access, arg_locations); these read
 * it from there.
 */
#include "family.h"

/* `probe` and `func` are constants that differ between the points of one
 * block, but the block's event layouts are shared, so every point gets the
 * size of the longest. */
static int longest_point_text(struct sema *sema, bool function)
{
	int longest = 0;
	for (int i = 0; sema->probe && i < sema->probe->points.count; i++) {
		const struct probe_point *point = sema->probe->points.items[i];
		const char *text = function ? point->function : point->name;
		int length = text ? (int)strlen(text) : 0;
		if (length > longest)
			longest = length;
	}
	return longest;
}

/* An argument the provider located in pt_regs, in the traced process's
 * memory, or as a constant (USDT), converted to its size and signedness. */
static int read_arg_location(struct codegen *gen, const struct arg_location *location)
{
	struct type *type = type_int(location->size ? location->size : 8, location->is_signed);
	if (location->kind == ARG_LOCATION_CONSTANT)
		return gen_const_reg(gen, location->displacement);
	if (location->kind == ARG_LOCATION_ATTACH_COOKIE) {
		struct helper_arg args[1] = { ARG_REG(gen->ctx_reg) };
		return gen_call_helper(gen, BPF_FUNC_get_attach_cookie, args, 1);
	}
	if (location->kind == ARG_LOCATION_SAVED_REGISTER) {
		int address = gen_load_int(gen, gen->ctx_reg, 0, 8, false);
		ir_alu_imm(&gen->fn, BPF_ADD, address, location->register_offset);
		int slot = gen_stack_alloc(gen, 8);
		ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)slot, 0);
		struct helper_arg args[3] = { ARG_STACK(slot), ARG_IMM(8), ARG_REG(address) };
		gen_call_helper(gen, BPF_FUNC_probe_read_kernel, args, 3);
		int value = gen_load_int(gen, BPF_REG_10, slot, 8, false);
		gen_convert_int(gen, value, type);
		return value;
	}
	int value = gen_load_int(gen, gen->ctx_reg, location->register_offset, 8, false);
	if (location->kind == ARG_LOCATION_REGISTER) {
		gen_convert_int(gen, value, type);
		return value;
	}
	if (location->index_offset >= 0) {
		int index = gen_load_int(gen, gen->ctx_reg, location->index_offset, 8, false);
		if (location->scale > 1)
			ir_alu_imm(&gen->fn, BPF_MUL, index, location->scale);
		ir_alu(&gen->fn, BPF_ADD, value, index);
	}
	if (location->displacement)
		ir_alu_imm(&gen->fn, BPF_ADD, value, (int32_t)location->displacement);
	int slot = gen_stack_alloc(gen, 8);
	ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)slot, 0);
	struct helper_arg args[3] = { ARG_STACK(slot), ARG_IMM(type->size), ARG_REG(value) };
	gen_call_helper(gen, BPF_FUNC_probe_read_user, args, 3);
	return gen_load_int(gen, BPF_REG_10, slot, type->size, type->is_signed);
}

/* ---- args ---- */

static void check_args(struct sema *sema, struct node *node)
{
	if (sema->map_loop_depth) {
		sema_error(sema, node->loc, "args cannot be used inside a for loop over a map");
		node->type = type_none();
		return;
	}
	if (!sema->point || !(sema->point->features & PROBE_HAS_ARGS) || !sema->point->args_type) {
		sema_error(sema, node->loc, "the probe %s has no args",
			   sema->point ? sema->point->name : "");
		node->type = type_none();
		return;
	}
	node->type = sema->point->args_type;
}

/* `args` alone is only ever a base for its fields */
static struct value generate_args(struct codegen *gen, struct node *node)
{
	return value_reg(gen_const_reg(gen, 0), type_int(8, true));
}

static struct value read_kernel_string(struct codegen *gen, int address_reg, struct type *type)
{
	int offset = gen_stack_alloc(gen, type->size);
	gen_zero_stack(gen, offset, type->size);
	struct helper_arg args[3] = { ARG_STACK(offset), ARG_IMM(type->size), ARG_REG(address_reg) };
	gen_call_helper(gen, BPF_FUNC_probe_read_kernel_str, args, 3);
	return value_stack(offset, type);
}

/* args.field: from the context as the provider laid it out */
static struct value generate_args_field(struct codegen *gen, struct node *node)
{
	if (gen->point->args_access == ARGS_U64_ARRAY) {
		/* raw tracepoints and fentry: each argument is one u64 slot of the context */
		struct type *record = gen->point->args_type;
		for (int i = 0; record && i < record->field_count; i++) {
			if (strcmp(record->fields[i].name, node->name) != 0)
				continue;
			int reg = gen_load_int(gen, gen->ctx_reg, record->fields[i].offset, 8, false);
			gen_convert_int(gen, reg, node->type);
			return value_reg(reg, node->type);
		}
		return value_reg(gen_const_reg(gen, 0), node->type);
	}
	if (gen->point->args_access == ARGS_LOCATED_RECORD) {
		/* the provider says where each field of the record really is */
		struct type *record = gen->point->args_type;
		for (int i = 0; record && i < record->field_count && i < gen->point->arg_count; i++) {
			if (strcmp(record->fields[i].name, node->name) != 0)
				continue;
			int reg = read_arg_location(gen, &gen->point->arg_locations[i]);
			gen_convert_int(gen, reg, node->type);
			return value_reg(reg, node->type);
		}
		return value_reg(gen_const_reg(gen, 0), node->type);
	}
	if (gen->point->args_access != ARGS_CTX_RECORD)
		return value_reg(gen_const_reg(gen, 0), node->type);
	struct type *record = gen->point->args_type;
	struct type_field *field = NULL;
	for (int i = 0; i < record->field_count; i++)
		if (strcmp(record->fields[i].name, node->name) == 0)
			field = &record->fields[i];
	if (!field)
		return value_reg(gen_const_reg(gen, 0), node->type);
	struct type *type = field->type;
	if (type->kind == TYPE_STRING && type->is_data_loc) {
		/* __data_loc: a u32 whose low half is the string's offset in the record */
		int location = gen_load_int(gen, gen->ctx_reg, field->offset, 4, false);
		ir_alu_imm(&gen->fn, BPF_AND, location, 0xffff);
		ir_alu(&gen->fn, BPF_ADD, location, gen->ctx_reg);
		return read_kernel_string(gen, location, type_string(gen->sema->options->max_strlen));
	}
	if (type->kind == TYPE_STRING) {
		int offset = gen_stack_alloc(gen, type->size);
		gen_zero_stack(gen, offset, type->size);
		int source = ir_new_vreg(&gen->fn);
		ir_mov(&gen->fn, source, gen->ctx_reg);
		ir_alu_imm(&gen->fn, BPF_ADD, source, field->offset);
		struct helper_arg args[3] = { ARG_STACK(offset), ARG_IMM(type->size), ARG_REG(source) };
		gen_call_helper(gen, BPF_FUNC_probe_read_kernel, args, 3);
		return value_stack(offset, type);
	}
	if (type->kind == TYPE_ARRAY) {
		/* an address in the record, like an array in kernel memory */
		int address = ir_new_vreg(&gen->fn);
		ir_mov(&gen->fn, address, gen->ctx_reg);
		ir_alu_imm(&gen->fn, BPF_ADD, address, field->offset);
		return gen_read_memory(gen, address, type, false, NULL);
	}
	int size = type->kind == TYPE_INT ? type->size : 8;
	return value_reg(gen_load_int(gen, gen->ctx_reg, field->offset, size,
				      type->kind == TYPE_INT && type->is_signed), type);
}

/* ---- arg0 .. arg15 ---- */

static void check_arg(struct sema *sema, struct node *node)
{
	const char *name = node->name;
	if (!sema->point || !(sema->point->features & PROBE_HAS_ARGN)) {
		sema_error(sema, node->loc, "%s is not available for probe %s (it has no numbered arguments%s)",
			   name, sema->point ? sema->point->name : "",
			   sema->point && (sema->point->features & PROBE_HAS_ARGS) ? "; use args" : "");
		node->type = type_none();
		return;
	}
	int index = (int)node->int_value;
	struct probe_point *point = sema->point;
	if ((point->args_access == ARGS_PT_REGS ||
	     (point->args_access == ARGS_U64_ARRAY && point->arg_count > 0)) &&
	    index >= point->arg_count) {
		sema_error(sema, node->loc, "%s is out of range: probe %s has %d argument%s", name,
			   point->name, point->arg_count, point->arg_count == 1 ? "" : "s");
		node->type = type_none();
		return;
	}
	if (point->args_access == ARGS_PT_REGS && point->arg_locations &&
	    point->arg_locations[index].size < 8)
		node->type = type_int(point->arg_locations[index].size,
				      point->arg_locations[index].is_signed);
	else
		node->type = type_int(8, false);
}

static struct value generate_arg(struct codegen *gen, struct node *node)
{
	int index = (int)node->int_value;
	if (gen->point->args_access == ARGS_U64_ARRAY)
		return value_reg(gen_load_int(gen, gen->ctx_reg, index * 8, 8, false), node->type);
	if (gen->point->args_access == ARGS_PT_REGS && index < gen->point->arg_count)
		return value_reg(read_arg_location(gen, &gen->point->arg_locations[index]), node->type);
	return value_reg(gen_const_reg(gen, 0), type_int(8, true));
}

/* ---- retval ---- */

static void check_retval(struct sema *sema, struct node *node)
{
	node->type = type_int(8, true);
}

static struct value generate_retval(struct codegen *gen, struct node *node)
{
	/* fexit: the return value follows the arguments in the u64 array */
	if (gen->point->args_access == ARGS_U64_ARRAY) {
		int reg = gen_load_int(gen, gen->ctx_reg, gen->point->arg_count * 8, 8, false);
		gen_convert_int(gen, reg, node->type);
		return value_reg(reg, node->type);
	}
	return value_reg(read_arg_location(gen, &gen->point->retval_location), node->type);
}

/* ---- probe and func: the point's full name and its function ---- */

/* A table bigger than this keeps the names as constants (one program per
 * point, as without a table). */
#define POINT_TABLE_MAX (1u << 20)

/* The text of `probe` or `func` for the running point. A point of a group
 * with a run-time index (probe_group.index) reads it from a table of its
 * block's points, one row of the string's size per index and an empty row
 * past the last (for an index out of range, which the verifier must be
 * shown cannot overflow), so that every point of the group compiles to the
 * same program; any other point gets a constant. */
static struct value generate_point_text(struct codegen *gen, struct node *node, bool function)
{
	const struct probe_point *point = gen->point;
	const char *text = function ? (point->function ? point->function : "") : point->name;
	const struct probe_group *group = point->group;
	uint32_t stride = ((uint32_t)node->type->size + 7) & ~7u;
	if (!group || group->index_limit <= 0 ||
	    (uint64_t)stride * (uint64_t)(group->index_limit + 1) > POINT_TABLE_MAX)
		return gen_string_constant(gen, text, (int)strlen(text), node->type);
	uint8_t *table;
	int map_id = gen_table_map(gen, function ? ".funcs" : ".probes", group, function,
				   stride * (uint32_t)(group->index_limit + 1), &table);
	for (int i = 0; table && i < gen->probe->points.count; i++) {
		const struct probe_point *other = gen->probe->points.items[i];
		const char *other_text = function ? other->function : other->name;
		if (other->group == group && other_text && other->group_slot >= 0 &&
		    other->group_slot < group->index_limit)
			strncpy((char *)table + (size_t)other->group_slot * stride, other_text,
				stride - 1);
	}
	int index = read_arg_location(gen, &group->index);
	int in_range = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JLT, index, group->index_limit, in_range);
	ir_mov_imm(&gen->fn, index, group->index_limit);
	ir_label(&gen->fn, in_range);
	ir_alu_imm(&gen->fn, BPF_MUL, index, (int32_t)stride);
	int row = ir_new_vreg(&gen->fn);
	ir_ld_map_value(&gen->fn, row, map_id, 0);
	ir_alu(&gen->fn, BPF_ADD, row, index);
	int slot = gen_stack_alloc(gen, node->type->size);
	gen_copy_memory(gen, BPF_REG_10, slot, row, 0, node->type->size);
	return value_stack(slot, node->type);
}

static void check_probe(struct sema *sema, struct node *node)
{
	node->type = type_string(longest_point_text(sema, false) + 1);
}

static struct value generate_probe(struct codegen *gen, struct node *node)
{
	return generate_point_text(gen, node, false);
}

static void check_func(struct sema *sema, struct node *node)
{
	node->type = type_string(longest_point_text(sema, true) + 1);
}

static struct value generate_func(struct codegen *gen, struct node *node)
{
	return generate_point_text(gen, node, true);
}

/* ---- ctx: the context pointer, typed where bpftrace types it ---- */

static bool context_is_pt_regs(const struct probe_point *point)
{
	return point && point->provider->prog_type == BPF_PROG_TYPE_KPROBE;
}

/* kprobes, uprobes and USDT: ctx->ip, ctx->cs... read the saved registers */
static struct type *pt_regs_pointer(void)
{
	struct type *regs = btf_available() ? btf_type_by_name("struct pt_regs") : NULL;
	return regs ? type_pointer(regs, false) : NULL;
}

static void check_ctx(struct sema *sema, struct node *node)
{
	const struct probe_point *point = sema->point;
	struct type *regs = context_is_pt_regs(point) ? pt_regs_pointer() : NULL;
	/* elsewhere an address only: a perf event's real context is not the
	 * struct bpf_perf_event_data programs see */
	node->type = regs ? regs : type_int(8, false);
	if (!point)
		return;
	if (strcmp(point->provider->name, "tracepoint") == 0) {
		sema_error(sema, node->loc, "use args instead of ctx in a tracepoint");
		node->type = type_none();
	} else if (strcmp(point->provider->name, "BEGIN") == 0 || strcmp(point->provider->name, "END") == 0) {
		sema_error(sema, node->loc, "ctx is not available in %s", point->provider->name);
		node->type = type_none();
	}
}

static struct value generate_ctx(struct codegen *gen, struct node *node)
{
	int reg = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, reg, gen->ctx_reg);
	return value_reg(reg, node->type);
}

/* Whether the context starts with the saved registers (struct pt_regs):
 * kprobes, uprobes and USDT, and perf events, whose struct
 * bpf_perf_event_data begins with them. Reports an error naming `what`
 * and the probe type otherwise. */
static bool context_holds_registers(struct sema *sema, struct src_loc loc, const char *what)
{
	const struct probe_point *point = sema->point;
	if (!point || context_is_pt_regs(point) || point->provider->prog_type == BPF_PROG_TYPE_PERF_EVENT)
		return true;
	sema_error(sema, loc, "%s needs a probe whose context holds the registers "
		   "(kprobe, uprobe, usdt, profile, interval, software, hardware), not %s", what,
		   point->provider->name);
	return false;
}

/* ---- usermode: 1 when the probe fired in user mode (x86-64: cs's privilege level is 3) ---- */

static void check_usermode(struct sema *sema, struct node *node)
{
	node->type = type_int(8, false);
	if (!context_holds_registers(sema, node->loc, "usermode"))
		node->type = type_none();
}

static struct value generate_usermode(struct codegen *gen, struct node *node)
{
	/* a perf event's context starts with the registers too */
	int mode = gen_load_int(gen, gen->ctx_reg, ARCH_MODE_REGISTER, 8, false);
	ir_alu_imm(&gen->fn, BPF_AND, mode, ARCH_MODE_MASK);
	return value_reg(gen_test_imm(gen, BPF_JEQ, mode, ARCH_USER_MODE), node->type);
}

/* ---- reg("name"): a saved register, by its x86-64 struct pt_regs name ---- */

static void check_reg(struct sema *sema, struct node *call)
{
	struct node *name = call->args;
	call->type = type_int(8, false);
	if (name->kind != NODE_STRING) {
		sema_error(sema, name->loc, "reg() needs a register name as a string literal (\"ip\", "
			   "\"sp\", \"di\", ...)");
		return;
	}
	if (arch_pt_regs_offset(name->string_value) < 0) {
		sema_error(sema, name->loc, "reg(): '%s' is not an x86-64 register; the names are those "
			   "of struct pt_regs: " ARCH_PT_REGS_NAMES, name->string_value);
		return;
	}
	context_holds_registers(sema, call->loc, "reg()");
}

static struct value generate_reg(struct codegen *gen, struct node *call)
{
	int offset = arch_pt_regs_offset(call->args->string_value);
	return value_reg(gen_load_int(gen, gen->ctx_reg, offset, 8, false), call->type);
}

const struct function_def builtins_context[] = {
	{ FUNCTION(reg, 1, 1) },
	{ 0 },
};

const struct variable_def variables_context[] = {
	{ VARIABLE(args), .generate_field = generate_args_field },
	{ VARIABLE(arg), .numbered = true },
	{ VARIABLE(retval), .needs = PROBE_HAS_RETVAL },
	{ VARIABLE(probe) },
	{ VARIABLE(func), .needs = PROBE_HAS_FUNC },
	{ VARIABLE(ctx), .is_stable = true },
	{ VARIABLE(usermode), .is_stable = true },
	{ 0 },
};
