/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Code generation: walks the typed AST of one probe block for one probe
 * point and appends IR (near-BPF instructions on virtual registers).
 *
 * Values are either 64-bit scalars in virtual registers or byte ranges on the
 * BPF stack (strings, tuples, keys, ring-buffer records). Scratch variables
 * get fixed stack slots, zeroed in the prologue so the verifier never sees an
 * uninitialised read (unless the body writes them before anything can read
 * them); temporaries are allocated per statement and their stack is reused
 * by the next statement. Conditions (if, while, ?:, predicates) are jumps,
 * never 0/1 values (gen_branch in codegen_statements.c).
 *
 * Map updates follow one pattern: build the key on the stack, look it up
 * once, update the value in place when it exists (per-CPU maps need no
 * atomics), and insert a fresh value only on a miss — one map operation per
 * event on the hot path.
 *
 * This file has the expressions, variables and maps, the prologue and
 * codegen_probe; operators are in codegen_operators.c and statements in
 * codegen_statements.c.
 */
#include "codegen_internal.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../aggregations/aggregation.h"
#include "builtins/builtins.h"

#define CTX_REG_ARG BPF_REG_1

static int round8(int size)
{
	return (size + 7) & ~7;
}

int gen_stack_alloc(struct codegen *gen, int size)
{
	int offset = ir_stack_alloc(&gen->fn, round8(size));
	if (gen->fn.stack_size > gen->stack_high)
		gen->stack_high = gen->fn.stack_size;
	return offset;
}

/* ---- helper calls ---- */

/* Sets up r1-r5, calls, and returns r0 copied into a fresh virtual register. */
/* -k watches reads of memory and map updates: the calls whose failure
 * leaves a value zeroed or a map without an entry, and nothing else says so. */
static bool gen_helper_checked(int helper)
{
	switch (helper) {
	case BPF_FUNC_probe_read:
	case BPF_FUNC_probe_read_str:
	case BPF_FUNC_probe_read_user:
	case BPF_FUNC_probe_read_user_str:
	case BPF_FUNC_probe_read_kernel:
	case BPF_FUNC_probe_read_kernel_str:
	case BPF_FUNC_map_update_elem:
		return true;
	default:
		return false;
	}
}

void gen_count_lost(struct codegen *gen, int slot);
int gen_map_lookup(struct codegen *gen, int map_id, int key_offset);

/* The site of this helper call at the current source location (one per
 * location and helper, however many probe points share the code). */
static int gen_helper_site(struct codegen *gen, int helper)
{
	struct program *program = gen->program;
	struct src_loc loc = gen->fn.loc;

	for (int i = 0; i < program->helper_sites.count; i++) {
		const struct helper_site *site = &program->helper_sites.items[i];
		if (site->helper == helper && site->loc.line == loc.line &&
		    site->loc.column == loc.column)
			return i;
	}
	struct helper_site site = { .loc = loc, .helper = helper };
	vec_push(&program->helper_sites, site);
	return program->helper_sites.count - 1;
}

/* A negative result (all the watched helpers fail so) counts at its site,
 * and its error code is kept in the site's second slot for the report. */
static void gen_count_helper_error(struct codegen *gen, int helper, int result)
{
	int site = gen_helper_site(gen, helper);
	int slot = gen->program->helper_slot_base + 2 * site;
	int done = ir_new_label(&gen->fn);

	ir_jump_if_imm(&gen->fn, BPF_JSGE, result, 0, done);
	gen_count_lost(gen, slot);
	int key = gen_stack_alloc(gen, 8);
	ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)key, slot + 1);
	int pointer = gen_map_lookup(gen, gen->program->lost_map_id, key);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, pointer, 0, done);
	ir_store(&gen->fn, 8, pointer, 0, result);
	ir_label(&gen->fn, done);
}

int gen_call_helper(struct codegen *gen, int helper, const struct helper_arg *args, int count)
{
	for (int i = 0; i < count; i++) {
		int reg = BPF_REG_1 + i;
		switch (args[i].kind) {
		case HELPER_ARG_REG:
			ir_mov(&gen->fn, reg, (int)args[i].value);
			break;
		case HELPER_ARG_IMM:
			ir_mov_imm(&gen->fn, reg, args[i].value);
			break;
		case HELPER_ARG_STACK:
			ir_mov(&gen->fn, reg, BPF_REG_10);
			ir_alu_imm(&gen->fn, BPF_ADD, reg, (int32_t)args[i].value);
			break;
		case HELPER_ARG_MAP:
			ir_ld_map(&gen->fn, reg, (int)args[i].value);
			break;
		}
	}
	ir_call(&gen->fn, helper);
	int result = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, result, BPF_REG_0);
	if (gen->sema->options->helper_checks && gen_helper_checked(helper))
		gen_count_helper_error(gen, helper, result);
	return result;
}

int gen_const_reg(struct codegen *gen, int64_t value)
{
	int reg = ir_new_vreg(&gen->fn);
	ir_mov_imm(&gen->fn, reg, value);
	return reg;
}

int gen_map_lookup(struct codegen *gen, int map_id, int key_offset)
{
	struct helper_arg args[2] = { ARG_MAP(map_id), ARG_STACK(key_offset) };
	return gen_call_helper(gen, BPF_FUNC_map_lookup_elem, args, 2);
}

void gen_count_lost(struct codegen *gen, int slot);

/* An update the kernel refuses (the map is full) is counted, so the
 * runtime can say data was dropped instead of losing it silently. */
void gen_map_update(struct codegen *gen, int map_id, int key_offset, int value_offset)
{
	struct helper_arg args[4] = { ARG_MAP(map_id), ARG_STACK(key_offset), ARG_STACK(value_offset),
				      ARG_IMM(BPF_ANY) };
	int result = gen_call_helper(gen, BPF_FUNC_map_update_elem, args, 4);
	int stored = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, result, 0, stored);
	gen_count_lost(gen, LOST_SLOT_REFUSED);
	ir_label(&gen->fn, stored);
}

/* ---- memory helpers ---- */

void gen_zero_stack(struct codegen *gen, int offset, int size)
{
	for (int at = 0; at < round8(size); at += 8)
		ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)(offset + at), 0);
}

/* Copies size bytes (rounded up to 8) between two bases+offsets. */
void gen_copy_memory(struct codegen *gen, int dst_base, int dst_offset, int src_base,
			int src_offset, int size)
{
	int temp = ir_new_vreg(&gen->fn);
	for (int at = 0; at + 8 <= round8(size); at += 8) {
		ir_load(&gen->fn, 8, temp, src_base, (int16_t)(src_offset + at));
		ir_store(&gen->fn, 8, dst_base, (int16_t)(dst_offset + at), temp);
	}
}

/* Loads `size` bytes at base+off into a register, sign-extending if asked. */
int gen_load_int(struct codegen *gen, int base, int offset, int size, bool is_signed)
{
	int reg = ir_new_vreg(&gen->fn);
	ir_load(&gen->fn, size, reg, base, (int16_t)offset);
	if (is_signed && size < 8) {
		ir_alu_imm(&gen->fn, BPF_LSH, reg, 64 - size * 8);
		ir_alu_imm(&gen->fn, BPF_ARSH, reg, 64 - size * 8);
	}
	return reg;
}

/* Truncates/extends a register to an integer type, C style; a bool
 * becomes x != 0, as C's _Bool does. */
void gen_convert_int(struct codegen *gen, int reg, const struct type *type)
{
	if (type->kind == TYPE_INT && type->is_bool) {
		/* (x | -x) has its top bit set exactly when x != 0 */
		int negated = ir_new_vreg(&gen->fn);
		ir_mov(&gen->fn, negated, reg);
		ir_alu_imm(&gen->fn, BPF_NEG, negated, 0);
		ir_alu(&gen->fn, BPF_OR, reg, negated);
		ir_alu_imm(&gen->fn, BPF_RSH, reg, 63);
		return;
	}
	if (type->kind != TYPE_INT || type->size >= 8)
		return;
	int shift = 64 - type->size * 8;
	ir_alu_imm(&gen->fn, BPF_LSH, reg, shift);
	ir_alu_imm(&gen->fn, type->is_signed ? BPF_ARSH : BPF_RSH, reg, shift);
}

/* Writes a value into a storage slot of slot_type (8-byte ints, padded strings). */
void gen_store_value(struct codegen *gen, struct value value, int base, int offset,
			const struct type *slot_type)
{
	if (value.kind == VALUE_REG) {
		ir_store(&gen->fn, 8, base, (int16_t)offset, value.reg);
		return;
	}
	if (value.kind == VALUE_ADDRESS) {
		/* a whole struct or array: copy it out of kernel memory; the slot's
		 * last word is zeroed first so that whole-word copies and compares
		 * of it never see stale bytes past the end */
		if (value.type->size % 8)
			ir_store_imm(&gen->fn, 8, base, (int16_t)(offset + (value.type->size & ~7)), 0);
		int dst = ir_new_vreg(&gen->fn);
		ir_mov(&gen->fn, dst, base);
		ir_alu_imm(&gen->fn, BPF_ADD, dst, offset);
		struct helper_arg args[3] = { ARG_REG(dst), ARG_IMM(value.type->size), ARG_REG(value.reg) };
		gen_call_helper(gen, value.is_user ? BPF_FUNC_probe_read_user : BPF_FUNC_probe_read_kernel,
			    args, 3);
		return;
	}
	if (value.kind != VALUE_STACK)
		return;
	if (value.type->kind == TYPE_TUPLE && slot_type && slot_type->kind == TYPE_TUPLE &&
	    !type_equal(value.type, slot_type) && value.type->field_count == slot_type->field_count) {
		/* same shape, different field sizes (e.g. strings) or a record's
		 * fields in another order: copy field by field, a record's by name */
		for (int i = 0; i < value.type->field_count; i++) {
			int from = type_matching_field(value.type, slot_type, i);
			if (from < 0)
				from = i;
			struct type *field = value.type->fields[from].type;
			int at = value.stack_offset + value.type->fields[from].offset;
			struct value part;
			if (field->kind == TYPE_INT || field->kind == TYPE_POINTER)
				part = value_reg(gen_load_int(gen, BPF_REG_10, at, 8, false), field);
			else
				part = value_stack(at, field);
			gen_store_value(gen, part, base, offset + slot_type->fields[i].offset,
				    slot_type->fields[i].type);
		}
		return;
	}
	int src_size = round8(value.type->size);
	int dst_size = slot_type ? round8(type_storage_size(slot_type)) : src_size;
	int copy = src_size < dst_size ? src_size : dst_size;
	gen_copy_memory(gen, base, offset, BPF_REG_10, value.stack_offset, copy);
	for (int at = copy; at < dst_size; at += 8)
		ir_store_imm(&gen->fn, 8, base, (int16_t)(offset + at), 0);
}

/* Materialises a value in a fresh stack slot (for helpers needing a pointer). */
int gen_value_to_stack(struct codegen *gen, struct value value, const struct type *slot_type)
{
	if (value.kind == VALUE_STACK && (!slot_type || type_equal(value.type, slot_type)))
		return value.stack_offset;
	int size = slot_type ? type_storage_size(slot_type) : type_storage_size(value.type);
	int offset = gen_stack_alloc(gen, size);
	gen_store_value(gen, value, BPF_REG_10, offset, slot_type ? slot_type : value.type);
	return offset;
}

int gen_value_to_reg(struct codegen *gen, struct value value)
{
	if (value.kind == VALUE_REG)
		return value.reg;
	int reg = ir_new_vreg(&gen->fn);
	ir_mov_imm(&gen->fn, reg, 0);
	return reg;
}

/* ---- map keys ---- */

bool gen_map_has_bucket(const struct map_desc *map)
{
	return type_is_bucketed(map->value_type);
}

int gen_user_key_size(const struct map_desc *map)
{
	return map->key_type ? round8(type_storage_size(map->key_type)) : 0;
}

/* Builds the BPF key for @m[keys] on the stack; a hist/lhist bucket slot
 * follows the user key and is left for the caller to fill. */
int gen_map_key(struct codegen *gen, struct node *map_node, struct map_desc *map)
{
	if (!map_node->args) {
		int key_offset = gen_stack_alloc(gen, map->key_size);
		/* a hist/lhist key without a user key is just the bucket, written next */
		if (!gen_map_has_bucket(map))
			gen_zero_stack(gen, key_offset, map->key_size);
		return key_offset;
	}
	if (!map->key_is_multi) {
		struct value key = gen_expr(gen, map_node->args);
		/* a fresh string of exactly the key's size can serve as the key itself */
		if (key.kind == VALUE_STACK && !gen_map_has_bucket(map) && type_equal(key.type, map->key_type) &&
		    round8(key.type->size) == (int)map->key_size)
			return key.stack_offset;
		int key_offset = gen_stack_alloc(gen, map->key_size);
		gen_store_value(gen, key, BPF_REG_10, key_offset, map->key_type);
		return key_offset;
	}
	int key_offset = gen_stack_alloc(gen, map->key_size);
	int index = 0;
	for (struct node *key = map_node->args; key; key = key->next, index++) {
		struct type_field *field = &map->key_type->fields[index];
		gen_store_value(gen, gen_expr(gen, key), BPF_REG_10, key_offset + field->offset, field->type);
	}
	return key_offset;
}

/* A u64 field of the config map (struct program_config), which the runtime
 * writes before attaching; 0 if the lookup fails. */
int gen_config_load(struct codegen *gen, int field_offset)
{
	int key = gen_stack_alloc(gen, 8);
	ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)key, 0);
	int pointer = gen_map_lookup(gen, gen->program->config_map_id, key);
	int field = gen_const_reg(gen, 0);
	int missing = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, pointer, 0, missing);
	ir_load(&gen->fn, 8, field, pointer, (int16_t)field_offset);
	ir_label(&gen->fn, missing);
	return field;
}

/* ---- lost-event accounting and ring-buffer records ---- */

void gen_count_lost(struct codegen *gen, int slot)
{
	int key = gen_stack_alloc(gen, 8);
	ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)key, slot);
	int pointer = gen_map_lookup(gen, gen->program->lost_map_id, key);
	int done = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, pointer, 0, done);
	int count = ir_new_vreg(&gen->fn);
	ir_load(&gen->fn, 8, count, pointer, 0);
	ir_alu_imm(&gen->fn, BPF_ADD, count, 1);
	ir_store(&gen->fn, 8, pointer, 0, count);
	ir_label(&gen->fn, done);
}

const struct event_desc *gen_event_of(struct codegen *gen, struct node *call)
{
	return &gen->program->events.items[call->event_id - 1];
}

/* bpf_ringbuf_output() of the record at `record`; returns its result. */
int gen_output_record(struct codegen *gen, struct helper_arg record, int size)
{
	struct helper_arg args[4] = { ARG_MAP(gen->program->ringbuf_map_id), record,
				      ARG_IMM(size), ARG_IMM(0) };
	return gen_call_helper(gen, BPF_FUNC_ringbuf_output, args, 4);
}

/* Sends the record at `record` (on the stack, or a register pointing into
 * the scratch buffer); a full ring buffer counts the record as lost. */
void gen_send_record(struct codegen *gen, struct helper_arg record, int size)
{
	int result = gen_output_record(gen, record, size);
	int sent = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, result, 0, sent);
	gen_count_lost(gen, LOST_SLOT_EVENTS);
	ir_label(&gen->fn, sent);
}

/*
 * Record arguments that are strings, tuples or 64-bit integers kept in a
 * map (`@m[k]`, `@m[k].N`) go from the map value to the record without a stop on the
 * stack. Arguments naming the same element share one lookup, and a run of
 * them lying side by side in both the value and the record is one
 * bpf_probe_read_kernel(): execsnoop's twenty arguments are one copy. A
 * missing element reads as zeros: the pointer is then 0 (plus the field's
 * offset), an address the helper refuses, and it clears its destination
 * when it fails.
 */
struct map_copy {
	const struct node *map;   /* the element's NODE_MAP; NULL: no run pending */
	int pointer;              /* its value's address, or 0 when it is missing */
	int src_offset, dst_offset, size;
};

/* A key that cannot change between two arguments of one record. */
static bool is_stable_key(const struct node *key)
{
	if (key->is_constant && key->type && key->type->kind == TYPE_INT)
		return true;
	return key->kind == NODE_BUILTIN && key->variable && key->variable->is_stable;
}

static bool same_element(const struct node *a, const struct node *b)
{
	if (a->map_id != b->map_id)
		return false;
	const struct node *x = a->args, *y = b->args;
	for (; x && y; x = x->next, y = y->next) {
		if (x->is_constant != y->is_constant || x->kind != y->kind)
			return false;
		if (x->is_constant ? x->const_value != y->const_value : strcmp(x->name, y->name) != 0)
			return false;
	}
	return !x && !y;
}

/* The map element `arg` reads from, with the field's offset in its value,
 * when the argument can be copied straight from the map into `slot`. */
static const struct node *map_copy_source(struct codegen *gen, const struct node *arg,
					  const struct type *slot, int *src_offset)
{
	const struct node *map_node = arg->kind == NODE_TUPLE_INDEX ? arg->lhs : arg;
	/* integers only when nothing converts them: 8 bytes both sides */
	if (map_node->kind != NODE_MAP || !type_equal(arg->type, slot) ||
	    (arg->type->kind == TYPE_INT && arg->type->size != 8) || arg->type->kind == TYPE_POINTER)
		return NULL;
	const struct map_desc *map = &gen->program->maps.items[map_node->map_id];
	if (type_is_aggregation(map->value_type))
		return NULL;
	for (const struct node *key = map_node->args; key; key = key->next)
		if (!is_stable_key(key))
			return NULL;
	*src_offset = arg->kind == NODE_TUPLE_INDEX
			      ? map->value_type->fields[arg->int_value].offset : 0;
	if (*src_offset + round8(arg->type->size) > (int)map->value_size)
		return NULL;
	return map_node;
}

static void map_copy_flush(struct codegen *gen, struct map_copy *copy, int base)
{
	if (!copy->map)
		return;
	int dst = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, dst, base);
	ir_alu_imm(&gen->fn, BPF_ADD, dst, copy->dst_offset);
	int src = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, src, copy->pointer);
	ir_alu_imm(&gen->fn, BPF_ADD, src, copy->src_offset);
	struct helper_arg args[3] = { ARG_REG(dst), ARG_IMM(copy->size), ARG_REG(src) };
	gen_call_helper(gen, BPF_FUNC_probe_read_kernel, args, 3);
	copy->map = NULL;
}

/* Copies `arg` from its map element into the record at dst_offset, joining
 * the pending run when it continues it. */
static void map_copy_add(struct codegen *gen, struct map_copy *copy, int base,
			 const struct node *map_node, int src_offset, int dst_offset, int size,
			 int *pointers, const struct node **elements, int *element_count)
{
	int pointer = -1;
	for (int i = 0; i < *element_count; i++)
		if (same_element(elements[i], map_node))
			pointer = pointers[i];
	if (pointer < 0) {
		struct map_desc *map = &gen->program->maps.items[map_node->map_id];
		int key = gen_map_key(gen, (struct node *)map_node, map);
		int found = gen_map_lookup(gen, map->id, key);
		/* a null-checked copy, so the verifier lets the offset be added */
		pointer = gen_const_reg(gen, 0);
		int missing = ir_new_label(&gen->fn);
		ir_jump_if_imm(&gen->fn, BPF_JEQ, found, 0, missing);
		ir_mov(&gen->fn, pointer, found);
		ir_label(&gen->fn, missing);
		pointers[*element_count] = pointer;
		elements[(*element_count)++] = map_node;
	}
	if (copy->map && copy->pointer == pointer && copy->src_offset + copy->size == src_offset &&
	    copy->dst_offset + copy->size == dst_offset) {
		copy->size += size;
		return;
	}
	map_copy_flush(gen, copy, base);
	*copy = (struct map_copy){ map_node, pointer, src_offset, dst_offset, size };
}

/* A record with the event index and the values of `arg_nodes` at the
 * offsets sema chose. */
void gen_send_event(struct codegen *gen, struct node *call, struct node *arg_nodes)
{
	const struct event_desc *event = gen_event_of(gen, call);
	/* A record too big for the stack (a tool's line with many strings) is
	 * built in the per-CPU scratch buffer. Either way it is built one
	 * argument at a time, so the stack holds one argument's temporaries. */
	bool in_scratch = event->record_size > EVENT_STACK_RECORD_MAX;
	int base = BPF_REG_10, record = 0, skip = -1;
	if (in_scratch) {
		int key = gen_stack_alloc(gen, 8);
		ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)key, 0);
		base = gen_map_lookup(gen, gen->program->scratch_map_id, key);
		skip = ir_new_label(&gen->fn);
		ir_jump_if_imm(&gen->fn, BPF_JEQ, base, 0, skip);
	} else {
		record = gen_stack_alloc(gen, event->record_size);
	}
	/* no zeroing: the index and every argument slot are written in full
	 * (gen_store_value pads strings), so no stale byte reaches user space */
	ir_store_imm(&gen->fn, 8, base, (int16_t)record, call->event_id - 1);
	struct node *arg = arg_nodes;
	struct map_copy copy = { 0 };
	int pointers[event->arg_count + 1];
	const struct node *elements[event->arg_count + 1];
	int element_count = 0;
	for (int i = 0; i < event->arg_count && arg; i++, arg = arg->next) {
		int watermark = gen->fn.stack_size;
		int src_offset;
		const struct node *map_node = map_copy_source(gen, arg, event->args[i].type, &src_offset);
		if (map_node) {
			map_copy_add(gen, &copy, base, map_node, src_offset, record + event->args[i].offset,
				     round8(arg->type->size), pointers, elements, &element_count);
			gen->fn.stack_size = watermark;
			continue;
		}
		struct value value = gen_expr(gen, arg);
		gen_store_value(gen, value, base, record + event->args[i].offset, event->args[i].type);
		/* the argument is in the record now: its temporaries are free */
		gen->fn.stack_size = watermark;
	}
	map_copy_flush(gen, &copy, base);
	if (!in_scratch) {
		gen_send_record(gen, ARG_STACK(record), event->record_size);
		return;
	}
	gen_send_record(gen, ARG_REG(base), event->record_size);
	ir_label(&gen->fn, skip);
}

/* ---- builtins ---- */

int gen_helper_value(struct codegen *gen, int helper)
{
	return gen_call_helper(gen, helper, NULL, 0);
}

struct value gen_string_constant(struct codegen *gen, const char *text, int length, struct type *type)
{
	int size = type->size;
	int offset = gen_stack_alloc(gen, size);
	for (int at = 0; at < round8(size); at += 8) {
		uint64_t chunk = 0;
		for (int i = 0; i < 8; i++)
			if (at + i < length)
				chunk |= (uint64_t)(uint8_t)text[at + i] << (8 * i);
		if (chunk <= INT32_MAX) {
			ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)(offset + at), (int32_t)chunk);
		} else {
			int reg = ir_new_vreg(&gen->fn);
			ir_mov_imm(&gen->fn, reg, (int64_t)chunk);
			ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)(offset + at), reg);
		}
	}
	return value_stack(offset, type);
}

/* ---- field access on a tracepoint's args ---- */

/* Reads an object of `type` at the address in `address`: integers and
 * pointers are read into registers, character arrays into a zeroed string
 * buffer; structs and other arrays stay addresses until a field is chosen. */
struct value gen_read_memory(struct codegen *gen, int address, struct type *type, bool is_user,
				const struct type_field *bitfield)
{
	int read_helper = is_user ? BPF_FUNC_probe_read_user : BPF_FUNC_probe_read_kernel;
	if (type->kind == TYPE_RECORD || type->kind == TYPE_ARRAY) {
		struct value value = { .kind = VALUE_ADDRESS, .reg = address, .type = type, .is_user = is_user };
		return value;
	}
	if (type->kind == TYPE_STRING) {
		int offset = gen_stack_alloc(gen, type->size);
		gen_zero_stack(gen, offset, type->size);
		struct helper_arg args[3] = { ARG_STACK(offset), ARG_IMM(type->size), ARG_REG(address) };
		gen_call_helper(gen, read_helper, args, 3);
		return value_stack(offset, type);
	}
	int size = type->kind == TYPE_INT ? type->size : 8;
	/* a packed struct's bitfield may run past its type's size */
	if (bitfield && bitfield->bitfield_bits &&
	    (bitfield->bitfield_offset + bitfield->bitfield_bits + 7) / 8 > size)
		size = (bitfield->bitfield_offset + bitfield->bitfield_bits + 7) / 8;
	int slot = gen_stack_alloc(gen, 8);
	/* the helper writes the bytes read back below (zeros when it fails);
	 * a bitfield is read back as a whole word, past them */
	bool whole_word = bitfield && bitfield->bitfield_bits;
	if (whole_word && size < 8)
		ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)slot, 0);
	struct helper_arg args[3] = { ARG_STACK(slot), ARG_IMM(size), ARG_REG(address) };
	gen_call_helper(gen, read_helper, args, 3);
	bool is_signed = type->kind == TYPE_INT && type->is_signed;
	if (whole_word) {
		int reg = gen_load_int(gen, BPF_REG_10, slot, 8, false);
		ir_alu_imm(&gen->fn, BPF_LSH, reg, 64 - bitfield->bitfield_offset - bitfield->bitfield_bits);
		ir_alu_imm(&gen->fn, is_signed ? BPF_ARSH : BPF_RSH, reg, 64 - bitfield->bitfield_bits);
		return value_reg(reg, type);
	}
	return value_reg(gen_load_int(gen, BPF_REG_10, slot, size, is_signed), type);
}

/* Fields of a struct reached through a pointer or by value, in memory. */
static struct value gen_memory_field(struct codegen *gen, struct node *node)
{
	struct value base = gen_expr(gen, node->lhs);
	struct type *record;
	bool is_user = false;
	int address;
	if (base.kind == VALUE_ADDRESS) {
		record = base.type;
		address = base.reg;
		is_user = base.is_user;
	} else {
		struct type *pointer = node->lhs->type;
		record = pointer->pointee;
		is_user = pointer->is_user_pointer;
		address = gen_value_to_reg(gen, base);
	}
	struct type_field *field = NULL;
	for (int i = 0; record && i < record->field_count; i++)
		if (record->fields[i].name && strcmp(record->fields[i].name, node->name) == 0)
			field = &record->fields[i];
	if (!field)
		return value_reg(gen_const_reg(gen, 0), node->type);
	int field_address = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, field_address, address);
	ir_alu_imm(&gen->fn, BPF_ADD, field_address, field->offset);
	return gen_read_memory(gen, field_address, node->type, is_user, field);
}

/* p[i] and a[i]: element i of a pointer's target or of an array in memory
 * (an array held in a variable or a tuple is on the stack) */
static struct value gen_index(struct codegen *gen, struct node *node)
{
	struct value base = gen_expr(gen, node->lhs);
	if (base.kind == VALUE_STACK && node->rhs->is_constant &&
	    (node->type->kind == TYPE_INT || node->type->kind == TYPE_POINTER)) {
		int size = node->type->kind == TYPE_INT ? node->type->size : 8;
		int at = base.stack_offset + (int)node->rhs->const_value * size;
		return value_reg(gen_load_int(gen, BPF_REG_10, at, size,
					  node->type->kind == TYPE_INT && node->type->is_signed), node->type);
	}
	if (base.kind == VALUE_STACK) {
		int address = ir_new_vreg(&gen->fn);
		ir_mov(&gen->fn, address, BPF_REG_10);
		ir_alu_imm(&gen->fn, BPF_ADD, address, base.stack_offset);
		base = (struct value){ .kind = VALUE_ADDRESS, .reg = address, .type = base.type };
	}
	bool is_user = base.kind == VALUE_ADDRESS ? base.is_user
			: node->lhs->type->kind == TYPE_POINTER && node->lhs->type->is_user_pointer;
	int address = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, address, base.kind == VALUE_ADDRESS ? base.reg : gen_value_to_reg(gen, base));
	int index = gen_value_to_reg(gen, gen_expr(gen, node->rhs));
	int element_size = node->type->size > 0 ? node->type->size : 1;
	int scaled = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, scaled, index);
	if (element_size > 1)
		ir_alu_imm(&gen->fn, BPF_MUL, scaled, element_size);
	ir_alu(&gen->fn, BPF_ADD, address, scaled);
	return gen_read_memory(gen, address, node->type, is_user, NULL);
}

/* v.field: a builtin variable may read its fields itself (args from the
 * probe's context); everything else is a struct in memory. */
static struct value gen_field(struct codegen *gen, struct node *node)
{
	const struct variable_def *variable = node->lhs->kind == NODE_BUILTIN ? node->lhs->variable : NULL;
	if (variable && variable->generate_field)
		return variable->generate_field(gen, node);
	return gen_memory_field(gen, node);
}

/* ---- variables and maps ---- */

struct var_info *gen_var_of(struct codegen *gen, struct node *var)
{
	return &gen->probe->vars.items[var->var_id];
}

int gen_var_address(struct codegen *gen, const struct var_info *var, int *offset)
{
	if (!gen->in_callback || var->loop_local) {
		*offset = var->stack_offset;
		return BPF_REG_10;
	}
	*offset = var->stack_offset - gen->outer_vars_base;
	return gen->outer_vars_reg;
}

static struct value read_var(struct codegen *gen, struct node *node)
{
	struct var_info *var = gen_var_of(gen, node);
	int offset;
	int base = gen_var_address(gen, var, &offset);
	if (var->type->kind == TYPE_INT || var->type->kind == TYPE_POINTER)
		return value_reg(gen_load_int(gen, base, offset, 8, false), var->type);
	if (base == BPF_REG_10)
		return value_stack(offset, var->type);
	int local = gen_stack_alloc(gen, var->type->size);
	gen_copy_memory(gen, BPF_REG_10, local, base, offset, var->type->size);
	return value_stack(local, var->type);
}

static struct value read_map(struct codegen *gen, struct node *node)
{
	struct map_desc *map = &gen->program->maps.items[node->map_id];
	int key = gen_map_key(gen, node, map);
	if (type_is_aggregation(map->value_type))
		return map->value_type->aggregation->read(gen, node, map, key);
	int pointer = gen_map_lookup(gen, map->id, key);
	struct type *type = map->value_type;
	int missing = ir_new_label(&gen->fn);
	if (type->kind == TYPE_INT || type->kind == TYPE_POINTER) {
		int result = gen_const_reg(gen, 0);
		ir_jump_if_imm(&gen->fn, BPF_JEQ, pointer, 0, missing);
		ir_load(&gen->fn, 8, result, pointer, 0);
		ir_label(&gen->fn, missing);
		return value_reg(result, type);
	}
	int offset = gen_stack_alloc(gen, map->value_size);
	gen_zero_stack(gen, offset, map->value_size);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, pointer, 0, missing);
	gen_copy_memory(gen, BPF_REG_10, offset, pointer, 0, map->value_size);
	ir_label(&gen->fn, missing);
	return value_stack(offset, type);
}

int gen_update_map_int(struct codegen *gen, struct node *map_node, enum op op, int delta, int *old,
		       const struct node *site)
{
	struct map_desc *map = &gen->program->maps.items[map_node->map_id];
	int key = gen_map_key(gen, map_node, map);
	int pointer = gen_map_lookup(gen, map->id, key);
	int current = gen_const_reg(gen, 0);
	int missing = ir_new_label(&gen->fn), done = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, pointer, 0, missing);
	ir_load(&gen->fn, 8, current, pointer, 0);
	ir_label(&gen->fn, missing);
	if (old) {
		*old = ir_new_vreg(&gen->fn);
		ir_mov(&gen->fn, *old, current);
	}
	gen_arithmetic(gen, op, current, delta, map->value_type, site);
	int insert = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, pointer, 0, insert);
	ir_store(&gen->fn, 8, pointer, 0, current);
	ir_jump(&gen->fn, done);
	ir_label(&gen->fn, insert);
	int value = gen_stack_alloc(gen, 8);
	ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)value, current);
	gen_map_update(gen, map->id, key, value);
	ir_label(&gen->fn, done);
	return current;
}

static struct value gen_incdec(struct codegen *gen, struct node *node)
{
	int one = gen_const_reg(gen, node->type->kind == TYPE_POINTER ? type_pointer_step(node->type) : 1);
	enum op op = node->op == OP_INC ? OP_ADD : OP_SUB;
	if (node->lhs->kind == NODE_MAP) {
		int old = -1;
		int updated = gen_update_map_int(gen, node->lhs, op, one, node->is_prefix ? NULL : &old, NULL);
		return value_reg(node->is_prefix ? updated : old, node->type);
	}
	struct var_info *var = gen_var_of(gen, node->lhs);
	int offset;
	int base = gen_var_address(gen, var, &offset);
	int value = gen_load_int(gen, base, offset, 8, false);
	int old = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, old, value);
	ir_alu(&gen->fn, op == OP_ADD ? BPF_ADD : BPF_SUB, value, one);
	gen_convert_int(gen, value, var->type); /* a uint8 at 255 goes to 0, as in C */
	ir_store(&gen->fn, 8, base, (int16_t)offset, value);
	return value_reg(node->is_prefix ? value : old, node->type);
}

/* ---- expressions ---- */

static struct value gen_ternary(struct codegen *gen, struct node *node)
{
	if (gen_is_known(node->cond, true) || gen_is_known(node->cond, false)) {
		struct value chosen = gen_expr(gen, node->cond->const_value ? node->lhs : node->rhs);
		chosen.type = node->type;
		return chosen;
	}
	int when_true = ir_new_label(&gen->fn), done = ir_new_label(&gen->fn);
	bool scalar = node->type->kind == TYPE_INT || node->type->kind == TYPE_POINTER;
	int result_reg = scalar ? ir_new_vreg(&gen->fn) : -1;
	int result_offset = scalar ? 0 : gen_stack_alloc(gen, type_storage_size(node->type));
	/* the false value first, where the jump falls through (as an if's else) */
	gen_branch(gen, node->cond, true, when_true);
	struct node *branches[2] = { node->rhs, node->lhs };
	for (int i = 0; i < 2; i++) {
		struct value value = gen_expr(gen, branches[i]);
		if (scalar)
			ir_mov(&gen->fn, result_reg, gen_value_to_reg(gen, value));
		else
			gen_store_value(gen, value, BPF_REG_10, result_offset, node->type);
		if (i == 0) {
			ir_jump(&gen->fn, done);
			ir_label(&gen->fn, when_true);
		}
	}
	ir_label(&gen->fn, done);
	return scalar ? value_reg(result_reg, node->type) : value_stack(result_offset, node->type);
}

/* Every field is written in full (gen_store_value pads), so only the bytes
 * between fields need zeroing; a call that can (str(), through its record's
 * generate_into) writes straight into its field rather than into a
 * temporary copied there (execsnoop's tuple of twenty arguments). */
static struct value gen_tuple(struct codegen *gen, struct node *node)
{
	int offset = gen_stack_alloc(gen, node->type->size);
	int covered = 0;
	for (int i = 0; i < node->type->field_count; i++) {
		struct type_field *field = &node->type->fields[i];
		for (int at = covered & ~7; at < (field->offset & ~7); at += 8)
			ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)(offset + at), 0);
		int end = field->offset + round8(type_storage_size(field->type));
		if (end > covered)
			covered = end;
	}
	for (int at = covered; at < round8(node->type->size); at += 8)
		ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)(offset + at), 0);
	int index = 0;
	for (struct node *element = node->args; element; element = element->next, index++) {
		struct type_field *field = &node->type->fields[index];
		int watermark = gen->fn.stack_size;
		const struct function_def *function = element->kind == NODE_CALL ? element->function
										  : NULL;
		bool written = function && function->generate_into &&
			       type_equal(element->type, field->type) &&
			       function->generate_into(gen, element, offset + field->offset);
		if (!written)
			gen_store_value(gen, gen_expr(gen, element), BPF_REG_10, offset + field->offset,
					field->type);
		gen->fn.stack_size = watermark;
	}
	return value_stack(offset, node->type);
}

static struct value gen_tuple_index(struct codegen *gen, struct node *node)
{
	struct value tuple = gen_expr(gen, node->lhs);
	struct type_field *field = &tuple.type->fields[node->int_value];
	if (field->type->kind == TYPE_INT || field->type->kind == TYPE_POINTER)
		return value_reg(gen_load_int(gen, BPF_REG_10, tuple.stack_offset + field->offset, 8, false),
				 field->type);
	return value_stack(tuple.stack_offset + field->offset, field->type);
}

struct value gen_expr(struct codegen *gen, struct node *node)
{
	struct src_loc saved = gen->fn.loc;
	gen->fn.loc = node->loc;
	struct value result;
	if (node->is_constant && node->type && node->type->kind == TYPE_INT) {
		result = value_reg(gen_const_reg(gen, (int64_t)node->const_value), node->type);
		gen->fn.loc = saved;
		return result;
	}
	switch (node->kind) {
	case NODE_STRING:
		result = gen_string_constant(gen, node->string_value, node->string_length, node->type);
		break;
	case NODE_BUILTIN:
		result = node->variable->generate(gen, node);
		break;
	case NODE_VAR:
		result = read_var(gen, node);
		break;
	case NODE_MAP:
		result = read_map(gen, node);
		break;
	case NODE_CALL:
		result = node->function->generate(gen, node);
		break;
	case NODE_BINARY:
		result = gen_binary(gen, node);
		break;
	case NODE_UNARY:
		result = gen_unary(gen, node);
		break;
	case NODE_INCDEC:
		result = gen_incdec(gen, node);
		break;
	case NODE_TERNARY:
		result = gen_ternary(gen, node);
		break;
	case NODE_BLOCK_EXPR:
		gen_stmts(gen, node->body);
		result = gen_expr(gen, node->lhs);
		break;
	case NODE_FIELD:
		result = gen_field(gen, node);
		break;
	case NODE_TUPLE:
		result = gen_tuple(gen, node);
		break;
	case NODE_TUPLE_INDEX:
		result = gen_tuple_index(gen, node);
		break;
	case NODE_INDEX:
		result = gen_index(gen, node);
		break;
	case NODE_CAST: {
		int reg = ir_new_vreg(&gen->fn);
		ir_mov(&gen->fn, reg, gen_value_to_reg(gen, gen_expr(gen, node->lhs)));
		gen_convert_int(gen, reg, node->type); /* (bool)x is x != 0 */
		result = value_reg(reg, node->type);
		break;
	}
	case NODE_POSITIONAL: /* str($N) handles strings; numbers are constants */
	default:
		result = value_reg(gen_const_reg(gen, 0), node->type ? node->type : type_int(8, true));
		break;
	}
	gen->fn.loc = saved;
	return result;
}

/* How often pid and tid are read in a tree (a helper call each, otherwise). */
static int count_pid_reads(const struct node *node)
{
	int count = 0;
	for (; node; node = node->next) {
		if (node->kind == NODE_BUILTIN && node->variable && node->variable->reads_pid_tgid)
			count++;
		const struct node *children[] = { node->lhs, node->rhs, node->cond, node->then,
						  node->els, node->body, node->args, node->predicate };
		for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++)
			count += count_pid_reads(children[i]);
	}
	return count;
}

static void note_vars(const struct node *node, bool *seen);

/* Marks in `seen` every scratch variable one node's tree names. */
static void note_vars_of(const struct node *node, bool *seen)
{
	if (node->kind == NODE_VAR && node->var_id >= 0)
		seen[node->var_id] = true;
	const struct node *children[] = { node->lhs, node->rhs, node->cond, node->then,
					  node->els, node->body, node->args, node->predicate };
	for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++)
		note_vars(children[i], seen);
}

/* The same for each node of a list. */
static void note_vars(const struct node *node, bool *seen)
{
	for (; node; node = node->next)
		note_vars_of(node, seen);
}

/* The integer variables whose first mention is a plain `$x = value` among
 * the body's own statements (not inside an if or a loop), the value not
 * naming $x: every run writes them before anything reads them, so their
 * slots need no zeroing in the prologue, which costs a store per variable
 * per event. */
static void find_assigned_first(struct codegen *gen)
{
	int count = gen->probe->vars.count;
	gen->assigned_first = xcalloc(count + 1, sizeof(bool));
	bool *seen = xcalloc(count + 1, sizeof(bool));
	note_vars(gen->probe->node->predicate, seen);
	for (const struct node *stmt = gen->probe->node->body; stmt; stmt = stmt->next) {
		const struct node *target = stmt->kind == NODE_ASSIGN ? stmt->lhs : NULL;
		if (target && target->kind == NODE_VAR && stmt->op == OP_ASSIGN && stmt->rhs &&
		    target->var_id >= 0 && !seen[target->var_id]) {
			const struct type *type = gen->probe->vars.items[target->var_id].type;
			note_vars(stmt->rhs, seen);
			if (!seen[target->var_id] && type &&
			    (type->kind == TYPE_INT || type->kind == TYPE_POINTER))
				gen->assigned_first[target->var_id] = true;
		}
		note_vars_of(stmt, seen);
	}
	free(seen);
}

static void gen_prologue(struct codegen *gen)
{
	gen->ctx_reg = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, gen->ctx_reg, CTX_REG_ARG);
	/* pid/tid read several times (predicate, key, delete): one helper call.
	 * The count includes the -p filter, which reads the pid too. */
	gen->pid_tgid_reg = -1;
	pid_t target = gen->point->provider->no_task_context ? 0 : gen->sema->options->target_pid;
	/* with -p, the uprobe is attached to that process alone */
	pid_t own = gen->point->provider->user_space && !target ? gen->sema->options->own_pid : 0;
	int pid_reads = count_pid_reads(gen->probe->node->predicate) +
			count_pid_reads(gen->probe->node->body) + (target ? 1 : 0) + (own ? 1 : 0);
	if (pid_reads >= 2)
		gen->pid_tgid_reg = gen_helper_value(gen, BPF_FUNC_get_current_pid_tgid);
	gen->exit_label = ir_new_label(&gen->fn);
	find_assigned_first(gen);
	if (gen->stoppable) {
		/* first of all: the run may have ended while the kernel still
		 * holds this program attached (run.c releases links later) */
		/* a direct load from the config map's value: no helper call */
		int stopped = ir_new_vreg(&gen->fn);
		ir_ld_map_value(&gen->fn, stopped, gen->program->config_map_id,
				offsetof(struct program_config, stopped));
		ir_load(&gen->fn, 8, stopped, stopped, 0);
		ir_jump_if_imm(&gen->fn, BPF_JNE, stopped, 0, gen->exit_label);
	}
	for (int i = 0; i < gen->probe->vars.count; i++) {
		struct var_info *var = &gen->probe->vars.items[i];
		int size = type_storage_size(var->type);
		if (size <= 0)
			size = 8;
		var->stack_offset = gen_stack_alloc(gen, size);
		if (!gen->assigned_first[i])
			gen_zero_stack(gen, var->stack_offset, size);
	}
	/* a pointer to this area is what loop callbacks receive */
	gen->vars_base = -gen->fn.stack_size;
	if (target || own) {
		int pid;
		if (gen->pid_tgid_reg >= 0) {
			pid = ir_new_vreg(&gen->fn);
			ir_mov(&gen->fn, pid, gen->pid_tgid_reg);
		} else {
			pid = gen_helper_value(gen, BPF_FUNC_get_current_pid_tgid);
		}
		ir_alu_imm(&gen->fn, BPF_RSH, pid, 32);
		if (target)
			ir_jump_if_imm(&gen->fn, BPF_JNE, pid, target, gen->exit_label);
		else
			ir_jump_if_imm(&gen->fn, BPF_JEQ, pid, own, gen->exit_label);
	}
	struct node *predicate = gen->probe->node->predicate;
	if (predicate) {
		int watermark = gen->fn.stack_size;
		gen->fn.loc = predicate->loc;
		gen_condition_jump(gen, predicate, gen->exit_label);
		gen->fn.stack_size = watermark;
	}
}

/* The kernel refuses a program that uses more than MAX_USED_MAPS (64)
 * maps, and says so without a location; the error belongs on the use of the
 * map that did not fit. Internal maps (events, lost counts...) count too. */
#define MAX_MAPS_PER_PROGRAM 64

/* The first NODE_MAP naming map `id` in a probe's tree, in source order. */
static const struct node *find_map_use(const struct node *node, int id)
{
	for (; node; node = node->next) {
		if (node->kind == NODE_MAP && node->map_id == id)
			return node;
		const struct node *children[] = { node->predicate, node->args, node->lhs, node->rhs,
						  node->cond, node->then, node->els, node->body };
		for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++) {
			const struct node *found = find_map_use(children[i], id);
			if (found)
				return found;
		}
	}
	return NULL;
}

static int check_map_count(const struct program *program, const struct probe_info *probe,
			   const struct probe_program *out, struct diag *diag)
{
	bool *used = xcalloc(program->maps.count ? program->maps.count : 1, sizeof(*used));
	int distinct = 0, result = 0;
	for (int i = 0; i < out->insn_count; i++) {
		const struct bpf_insn *insn = &out->insns[i];
		if (insn->code != (BPF_LD | BPF_DW | BPF_IMM) || insn->src_reg != BPF_PSEUDO_MAP_FD)
			continue;
		i++; /* the second half of the 16-byte load */
		int id = insn->imm;
		if (id < 0 || id >= program->maps.count || used[id])
			continue;
		used[id] = true;
		if (++distinct <= MAX_MAPS_PER_PROGRAM)
			continue;
		const struct map_desc *map = &program->maps.items[id];
		/* not probe->node itself: its `next` is the following probe */
		const struct node *use = find_map_use(probe->node->predicate, id);
		if (!use)
			use = find_map_use(probe->node->body, id);
		struct src_loc loc = use ? use->loc
			: out->insn_locs && out->insn_locs[i - 1].line > 0 ? out->insn_locs[i - 1]
									    : probe->node->loc;
		if (map->role == MAP_ROLE_USER)
			diag_error(diag, loc, "map %s does not fit: one probe may use at most %d maps "
				   "(a kernel limit, sonde's internal maps included)",
				   map->name, MAX_MAPS_PER_PROGRAM);
		else
			diag_error(diag, loc, "too many maps: one probe may use at most %d maps "
				   "(a kernel limit, sonde's internal maps included)",
				   MAX_MAPS_PER_PROGRAM);
		result = -1;
		break;
	}
	free(used);
	return result;
}

/* ---- frames too big for the BPF stack ---- */

/* A per-CPU array's value is at most this big (the kernel's PCPU_MIN_UNIT_SIZE). */
#define FRAME_MAP_VALUE_MAX 32768

/* The ".frames" map (one entry per probe program whose temporaries moved
 * off the stack), created on first use; returns its id and the entry's key. */
static int frame_map_entry(struct program *program, int frame_size, int *key)
{
	for (int i = 0; i < program->maps.count; i++) {
		struct map_desc *map = &program->maps.items[i];
		if (map->role == MAP_ROLE_SCRATCH && strcmp(map->name, ".frames") == 0) {
			if ((uint32_t)frame_size > map->value_size)
				map->value_size = (uint32_t)frame_size;
			*key = (int)map->max_entries++;
			return map->id;
		}
	}
	struct map_desc map = {
		.id = program->maps.count, .name = xstrdup(".frames"), .role = MAP_ROLE_SCRATCH,
		.bpf_map_type = BPF_MAP_TYPE_PERCPU_ARRAY, .key_size = 4,
		.value_size = (uint32_t)frame_size, .max_entries = 1, .fd = -1,
	};
	vec_push(&program->maps, map);
	*key = 0;
	return map.id;
}

int gen_table_map(struct codegen *gen, const char *name, const void *owner, int tag,
		  uint32_t size, uint8_t **contents)
{
	struct program *program = gen->program;
	for (int i = 0; i < program->maps.count; i++) {
		struct map_desc *map = &program->maps.items[i];
		if (map->role == MAP_ROLE_TABLE && map->table_owner == owner &&
		    map->table_tag == tag && map->value_size == size) {
			*contents = NULL;
			return map->id;
		}
	}
	struct map_desc map = {
		.id = program->maps.count, .name = xstrdup(name), .role = MAP_ROLE_TABLE,
		.bpf_map_type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = size,
		.max_entries = 1, .initial_value = xcalloc(1, size), .table_owner = owner,
		.table_tag = tag, .fd = -1,
	};
	vec_push(&program->maps, map);
	*contents = map.initial_value;
	return map.id;
}

int gen_pinned_map(struct codegen *gen, const char *path)
{
	struct program *program = gen->program;
	for (int i = 0; i < program->maps.count; i++) {
		struct map_desc *map = &program->maps.items[i];
		if (map->role == MAP_ROLE_PINNED && strcmp(map->pin_path, path) == 0)
			return map->id;
	}
	/* the kernel checks lookups against the map itself; key_size is what
	 * the loader requires of it, value_size and max_entries are unused */
	struct map_desc map = {
		.id = program->maps.count, .name = xasprintf(".pinned%d", program->maps.count),
		.role = MAP_ROLE_PINNED, .bpf_map_type = BPF_MAP_TYPE_HASH, .key_size = 8,
		.value_size = 8, .max_entries = 1, .pin_path = xstrdup(path), .fd = -1,
	};
	vec_push(&program->maps, map);
	return map.id;
}

/* Moves the instructions from `from` to the end of fn to position `at`. */
static void ir_move_tail(struct ir_function *fn, int from, int at)
{
	int tail = fn->insns.count - from, middle = from - at;
	struct ir_insn *moved = xmalloc(sizeof(*moved) * (tail + middle + 1));
	memcpy(moved, fn->insns.items + from, sizeof(*moved) * tail);
	memcpy(moved + tail, fn->insns.items + at, sizeof(*moved) * middle);
	memcpy(fn->insns.items + at, moved, sizeof(*moved) * (tail + middle));
	free(moved);
}

/* Points every r10-relative access of the first `count` instructions at fp. */
static void frame_redirect(struct ir_function *fn, int count, int fp)
{
	for (int i = 0; i < count; i++) {
		struct ir_insn *insn = &fn->insns.items[i];
		if (insn->kind != IR_INSN)
			continue;
		int class = BPF_CLASS(insn->code);
		if (class == BPF_LDX && insn->src == BPF_REG_10)
			insn->src = fp;
		else if ((class == BPF_ST || class == BPF_STX) && insn->dst == BPF_REG_10)
			insn->dst = fp;
		else if (class == BPF_ALU64 && BPF_SRC(insn->code) == BPF_X && insn->src == BPF_REG_10)
			insn->src = fp;
	}
}

static bool is_for_each_call(const struct ir_insn *insn)
{
	return insn->kind == IR_INSN && insn->code == (BPF_JMP | BPF_CALL) &&
	       insn->imm == BPF_FUNC_for_each_map_elem;
}

/*
 * Rewrites gen->fn (its frame of frame_size bytes, or none when 0) for
 * frames that live in the ".frames" map; entry_count instructions at the
 * start take the arguments and stay first. In the probe itself (vars_slot
 * non-zero) the context handed to bpf_for_each_map_elem becomes that stack
 * slot, which holds the pointer to the probe's variables; in a callback
 * (context_reg >= 0) the context is that slot's address, so one load gives
 * the variables, and a nested loop passes the slot on.
 */
static void frame_move(struct codegen *gen, int frame_size, int entry_count, int vars_slot,
		       int context_reg, int fail_label)
{
	struct ir_function *fn = &gen->fn;
	int body_count = fn->insns.count;
	int fp = ir_new_vreg(fn), slot = context_reg >= 0 ? ir_new_vreg(fn) : -1;
	if (frame_size)
		frame_redirect(fn, body_count, fp);
	for (int i = 2; i < body_count; i++) {
		struct ir_insn *context = &fn->insns.items[i - 2];
		if (!is_for_each_call(&fn->insns.items[i]))
			continue;
		if (vars_slot && context->code == (BPF_ALU64 | BPF_ADD | BPF_K) && context->dst == BPF_REG_3) {
			fn->insns.items[i - 3].src = BPF_REG_10;
			context->imm = vars_slot;
		} else if (slot >= 0 && context->code == (BPF_ALU64 | BPF_MOV | BPF_X) &&
			   context->src == context_reg) {
			context->src = slot;
		}
	}
	if (slot >= 0) {
		fn->insns.items[entry_count - 1].dst = slot;
		ir_load(fn, 8, context_reg, slot, 0);
	}
	if (frame_size) {
		int key = 0;
		int map_id = frame_map_entry(gen->program, frame_size, &key);
		int key_slot = gen_stack_alloc(gen, 8);
		ir_store_imm(fn, 8, BPF_REG_10, (int16_t)key_slot, key);
		ir_mov(fn, fp, gen_map_lookup(gen, map_id, key_slot));
		ir_jump_if_imm(fn, BPF_JEQ, fp, 0, fail_label);
		ir_alu_imm(fn, BPF_ADD, fp, frame_size);
	}
	if (vars_slot) {
		int vars = ir_new_vreg(fn);
		ir_mov(fn, vars, frame_size ? fp : BPF_REG_10);
		ir_alu_imm(fn, BPF_ADD, vars, gen->vars_base);
		ir_store(fn, 8, BPF_REG_10, (int16_t)vars_slot, vars);
	}
	ir_move_tail(fn, body_count, entry_count);
}

/*
 * Moves the probe's frame (every r10-relative byte codegen used: strings,
 * keys, records, scratch variables) into its own entry of a per-CPU array,
 * for programs whose strings (SONDE_MAX_STRLEN=512 or 1024) do not fit the
 * kernel's 512-byte stack; current bpftrace keeps big strings in per-CPU
 * scratch maps too. The IR is rewritten rather than generated differently:
 * every access through r10 goes through a frame pointer `fp` set to the
 * end of the entry, so the negative offsets stay as they are. Each callback
 * with a frame gets an entry of its own the same way. Helpers accept a map
 * value wherever they accept stack memory, except bpf_for_each_map_elem's
 * context (ARG_PTR_TO_STACK_OR_NULL): there the probe passes an 8-byte
 * stack slot holding the pointer to its variables, and callbacks load it.
 * The stack then holds only the entries' keys, that slot and the register
 * allocator's spills. Per-CPU memory is safe: a program does not nest with
 * itself on a CPU, and a callback runs one element at a time.
 */
static bool move_frames_to_map(struct codegen *gen)
{
	int main_size = round8(gen->stack_high);
	if (main_size > FRAME_MAP_VALUE_MAX)
		return false;
	for (int i = 0; i < gen->subprograms.count; i++)
		if (round8(gen->subprograms.items[i].stack_size) > FRAME_MAP_VALUE_MAX)
			return false;
	struct ir_function probe_fn = gen->fn;
	for (int i = 0; i < gen->subprograms.count; i++) {
		struct callback_info *info = &gen->callbacks.items[i];
		gen->fn = gen->subprograms.items[i];
		int frame_size = round8(gen->fn.stack_size);
		gen->fn.stack_size = gen->stack_high = 0;
		int fail_label = ir_new_label(&gen->fn);
		frame_move(gen, frame_size, info->entry_count, 0, info->context_reg, fail_label);
		if (frame_size) { /* no entry to work in: skip the element */
			ir_label(&gen->fn, fail_label);
			ir_mov_imm(&gen->fn, BPF_REG_0, 0);
			ir_exit(&gen->fn);
		}
		gen->fn.stack_size = gen->stack_high;
		gen->subprograms.items[i] = gen->fn;
	}
	gen->fn = probe_fn;
	gen->fn.loc = gen->probe->node->loc;
	gen->fn.stack_size = gen->stack_high = 0;
	int vars_slot = gen->subprograms.count ? gen_stack_alloc(gen, 8) : 0;
	/* the first instruction takes the probe's context from r1 */
	frame_move(gen, main_size, 1, vars_slot, -1, gen->exit_label);
	gen->fn.stack_size = gen->stack_high;
	return true;
}

/* The deepest frame of the probe and its callbacks. */
static int deepest_frame(const struct codegen *gen)
{
	int deepest = gen->fn.stack_size;
	for (int i = 0; i < gen->subprograms.count; i++)
		if (gen->subprograms.items[i].stack_size > deepest)
			deepest = gen->subprograms.items[i].stack_size;
	return deepest;
}

/* Allocates the registers of the probe (function 0) and its callbacks;
 * on failure *failed says which function failed. */
static int allocate_all(struct codegen *gen, char **error, int *failed)
{
	for (*failed = 0; *failed <= gen->subprograms.count; ++*failed)
		if (regalloc_run(*failed ? &gen->subprograms.items[*failed - 1] : &gen->fn, error) < 0)
			return -1;
	*failed = 0;
	return 0;
}

/* A copy of fn's instructions, to retry register allocation with. */
static struct ir_function ir_function_copy(const struct ir_function *fn)
{
	struct ir_function copy = *fn;
	copy.insns.items = xmalloc(sizeof(*copy.insns.items) * (fn->insns.capacity ? fn->insns.capacity : 1));
	memcpy(copy.insns.items, fn->insns.items, sizeof(*copy.insns.items) * fn->insns.count);
	return copy;
}

/* The group's guard (probe_group.guard) in front of the emitted program,
 * with the table of the block's points it tests. Jumps and calls are
 * relative, so the program's own instructions stay as they are; where
 * its functions start moves. */
static void prepend_group_guard(struct codegen *gen, struct probe_program *out)
{
	const struct probe_group *group = gen->point->group;
	uint32_t size = ((uint32_t)group->index_limit + 63) / 64 * 8;
	uint8_t *members;
	int map_id = gen_table_map(gen, ".members", group, 2, size, &members);
	for (int i = 0; members && i < gen->probe->points.count; i++) {
		const struct probe_point *other = gen->probe->points.items[i];
		if (other->group == group && other->group_slot >= 0 &&
		    other->group_slot < group->index_limit)
			members[other->group_slot / 8] |= (uint8_t)(1u << (other->group_slot % 8));
	}
	struct bpf_insn guard[PROBE_GUARD_MAX];
	int count = group->guard(group, map_id, guard);
	int total = count + out->insn_count;
	struct bpf_insn *insns = xmalloc(sizeof(*insns) * (size_t)total);
	memcpy(insns, guard, sizeof(*insns) * (size_t)count);
	memcpy(insns + count, out->insns, sizeof(*insns) * (size_t)out->insn_count);
	free(out->insns);
	out->insns = insns;
	struct src_loc *locs = xmalloc(sizeof(*locs) * (size_t)total);
	for (int i = 0; i < count; i++)
		locs[i] = gen->probe->node->loc;
	memcpy(locs + count, out->insn_locs, sizeof(*locs) * (size_t)out->insn_count);
	free(out->insn_locs);
	out->insn_locs = locs;
	out->insn_count = total;
	/* the main function still starts at 0: the guard is its beginning */
	for (int i = 1; out->function_starts && i < out->function_count; i++)
		out->function_starts[i] += count;
}

int codegen_probe(struct sema *sema, struct probe_info *probe, struct probe_point *point,
		  struct probe_program *out, FILE *dump, struct diag *diag)
{
	struct codegen gen = { .sema = sema, .program = sema->program, .probe = probe, .point = point,
			       .stoppable = out->role == PROBE_ROLE_NORMAL };
	gen.fn.loc = probe->node->loc;
	gen_prologue(&gen);
	gen_stmts(&gen, probe->node->body);
	gen.fn.loc = probe->node->loc;
	ir_label(&gen.fn, gen.exit_label);
	ir_mov_imm(&gen.fn, BPF_REG_0, 0);
	ir_exit(&gen.fn);
	free(gen.loops.items);
	free(gen.assigned_first);
	/* A program that calls nothing and stores nothing outside its stack
	 * (a predicate known false, a tool's probe whose every statement an
	 * option folded away) is `r0 = 0; exit`, which a tool does not even
	 * attach: the stopped-run check alone would keep it, and an attached
	 * program costs its dispatch on every event. */
	if (gen.stoppable && gen.subprograms.count == 0) {
		ir_remove_unreachable(&gen.fn);
		if (!ir_has_effect(&gen.fn)) {
			gen.fn.insns.count = 0;
			gen.stack_high = 0;
			ir_mov_imm(&gen.fn, BPF_REG_0, 0);
			ir_exit(&gen.fn);
		}
	}
	gen.fn.stack_size = gen.stack_high;
	if (dump) {
		fprintf(dump, "IR for %s:\n", point->name);
		ir_print(dump, &gen.fn);
	}
	char *error = NULL;
	/* frames past the stack move to a per-CPU map; the IR is kept to
	 * retry with in case the stack alone is what failed */
	int count = gen.subprograms.count + 1, failed = 0;
	bool may_move = !gen.too_large && deepest_frame(&gen) > 256;
	struct ir_function *kept = xcalloc(count, sizeof(*kept));
	for (int i = 0; may_move && i < count; i++)
		kept[i] = ir_function_copy(i ? &gen.subprograms.items[i - 1] : &gen.fn);
	int result = gen.too_large ? 0 : allocate_all(&gen, &error, &failed);
	int failed_stack = failed ? gen.subprograms.items[failed - 1].stack_size : gen.fn.stack_size;
	if (result < 0 && may_move && failed_stack > 512) {
		for (int i = 0; i < count; i++) {
			struct ir_function *fn = i ? &gen.subprograms.items[i - 1] : &gen.fn;
			ir_free(fn);
			*fn = kept[i];
			kept[i] = (struct ir_function){ 0 };
		}
		gen.stack_high = gen.fn.stack_size;
		if (move_frames_to_map(&gen)) {
			free(error);
			error = NULL;
			if (dump) {
				fprintf(dump, "IR for %s, its frame moved to a per-CPU map:\n", point->name);
				ir_print(dump, &gen.fn);
			}
			result = allocate_all(&gen, &error, &failed);
		}
	}
	for (int i = 0; i < count; i++)
		ir_free(&kept[i]);
	free(kept);
	struct src_loc failed_at = failed ? gen.subprograms.items[failed - 1].loc : probe->node->loc;
	if (result == 0 && !gen.too_large) {
		struct ir_function *functions = xcalloc(count, sizeof(*functions));
		functions[0] = gen.fn;
		for (int i = 0; i < gen.subprograms.count; i++)
			functions[i + 1] = gen.subprograms.items[i];
		result = emit_program(functions, count, &out->insns, &out->insn_locs, &out->insn_count,
				      &out->function_starts, &error);
		out->function_count = count;
		free(functions);
	}
	/* (`r0 = 0; exit` stays what it is: a tool may drop it) */
	if (result == 0 && !gen.too_large && point->group && point->group->guard &&
	    out->insn_count > 2)
		prepend_group_guard(&gen, out);
	for (int i = 0; i < gen.subprograms.count; i++)
		ir_free(&gen.subprograms.items[i]);
	free(gen.subprograms.items);
	ir_free(&gen.fn);
	free(gen.callbacks.items);
	if (result < 0) {
		diag_error(diag, failed_at, "%s", error);
		free(error);
		return -1;
	}
	if (sema->error_count || check_map_count(sema->program, probe, out, diag) < 0)
		return -1;
	if (dump) {
		fprintf(dump, "BPF instructions for %s (%d):\n", point->name, out->insn_count);
		emit_print(dump, out->insns, out->insn_count);
	}
	return 0;
}
