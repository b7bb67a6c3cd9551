/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The part of code generation that builtins (compiler/builtins/) use to
 * emit their IR: values, stack slots, helper calls, map keys and lookups,
 * ring-buffer records. Only the builtins and codegen*.c include this.
 */
#ifndef SONDE_CODEGEN_INTERNAL_H
#define SONDE_CODEGEN_INTERNAL_H

#include "codegen.h"

static inline struct value value_reg(int reg, struct type *type)
{
	return (struct value){ .kind = VALUE_REG, .reg = reg, .type = type };
}

static inline struct value value_stack(int offset, struct type *type)
{
	return (struct value){ .kind = VALUE_STACK, .stack_offset = offset, .type = type };
}

static inline struct value value_none(void)
{
	return (struct value){ .kind = VALUE_NONE, .type = type_void() };
}

/* A helper argument, materialised straight into r1-r5 right before the call
 * so no virtual register is spent on constants, stack addresses or maps. */
enum helper_arg_kind { HELPER_ARG_REG, HELPER_ARG_IMM, HELPER_ARG_STACK, HELPER_ARG_MAP };

struct helper_arg {
	enum helper_arg_kind kind;
	int64_t value;
};

#define ARG_REG(r) ((struct helper_arg){ HELPER_ARG_REG, (r) })
#define ARG_IMM(v) ((struct helper_arg){ HELPER_ARG_IMM, (v) })
#define ARG_STACK(o) ((struct helper_arg){ HELPER_ARG_STACK, (o) })
#define ARG_MAP(id) ((struct helper_arg){ HELPER_ARG_MAP, (id) })

/* The value of an expression. */
struct value gen_expr(struct codegen *gen, struct node *node);
/* A temporary of `size` bytes (rounded up to 8); returns its r10 offset. */
int gen_stack_alloc(struct codegen *gen, int size);
/* Sets up r1-r5, calls, and returns r0 copied into a fresh virtual register. */
int gen_call_helper(struct codegen *gen, int helper, const struct helper_arg *args, int count);
int gen_const_reg(struct codegen *gen, int64_t value);
/* The result of a helper that takes no arguments. */
int gen_helper_value(struct codegen *gen, int helper);
int gen_value_to_reg(struct codegen *gen, struct value value);
void gen_zero_stack(struct codegen *gen, int offset, int size);
/* Copies size bytes (rounded up to 8) between two bases+offsets. */
void gen_copy_memory(struct codegen *gen, int dst_base, int dst_offset, int src_base,
		     int src_offset, int size);
/* Loads `size` bytes at base+off into a register, sign-extending if asked. */
int gen_load_int(struct codegen *gen, int base, int offset, int size, bool is_signed);
/* Truncates/extends a register to an integer type, C style. */
void gen_convert_int(struct codegen *gen, int reg, const struct type *type);
/* Writes a value into a storage slot of slot_type (8-byte ints, padded strings). */
void gen_store_value(struct codegen *gen, struct value value, int base, int offset,
		     const struct type *slot_type);
/* Signed division and remainder with C's truncation toward zero. */
void gen_signed_divide(struct codegen *gen, int dividend, int divisor, bool remainder);
/* 1 when `reg jump_op imm` holds (BPF_JEQ, BPF_JNE, ...), else 0. */
int gen_test_imm(struct codegen *gen, int jump_op, int reg, int32_t imm);
/* Compares `limit` bytes of two strings; 1 in the result when equal. */
int gen_string_equal(struct codegen *gen, struct value a, struct value b, int limit);
/* Reads an object of `type` at the address in `address`: integers and
 * pointers into registers, character arrays into a zeroed string buffer;
 * structs and other arrays stay addresses until a field is chosen. */
struct value gen_read_memory(struct codegen *gen, int address, struct type *type, bool is_user,
			     const struct type_field *bitfield);
/* A string constant on the stack, padded to type->size. */
struct value gen_string_constant(struct codegen *gen, const char *text, int length, struct type *type);

/* ---- maps ---- */
/* The id of a table of constants (MAP_ROLE_TABLE, `size` bytes) made by
 * `owner` under `tag`: a new one has *contents pointing at its zeroed bytes
 * for the caller to fill; one made before has *contents NULL. */
int gen_table_map(struct codegen *gen, const char *name, const void *owner, int tag,
		  uint32_t size, uint8_t **contents);
/* The map pinned at path (opened by the loader; one map per path). */
int gen_pinned_map(struct codegen *gen, const char *path);
/* Builds the BPF key for @m[keys] on the stack; a hist/lhist bucket slot
 * follows the user key and is left for the caller to fill. */
int gen_map_key(struct codegen *gen, struct node *map_node, struct map_desc *map);
bool gen_map_has_bucket(const struct map_desc *map);
int gen_user_key_size(const struct map_desc *map);
int gen_map_lookup(struct codegen *gen, int map_id, int key_offset);
/* An update the kernel refuses (the map is full) is counted as lost. */
void gen_map_update(struct codegen *gen, int map_id, int key_offset, int value_offset);
/* A u64 field of struct program_config (the config map), 0 if unreadable. */
int gen_config_load(struct codegen *gen, int field_offset);
/* Counts a lost record (slot 0) or a refused map update (slot 1). */
void gen_count_lost(struct codegen *gen, int slot);

/* ---- ring-buffer records ---- */
const struct event_desc *gen_event_of(struct codegen *gen, struct node *call);
/* bpf_ringbuf_output() of the record at `record`; returns its result. */
int gen_output_record(struct codegen *gen, struct helper_arg record, int size);
/* Sends a record; a full ring buffer counts it as lost. */
void gen_send_record(struct codegen *gen, struct helper_arg record, int size);
/* The call's event with the values of `arg_nodes` at the offsets sema chose. */
void gen_send_event(struct codegen *gen, struct node *call, struct node *arg_nodes);

/* ---- callbacks (bpf_for_each_map_elem) ---- */
/* Starts a subprogram; the caller's function is returned to be restored. */
struct ir_function gen_callback_begin(struct codegen *gen, int *saved_high);
/* Ends it; returns its subprogram index. */
int gen_callback_end(struct codegen *gen, struct ir_function caller, int saved_high);
/* bpf_for_each_map_elem over map_id with the subprogram; returns the count. */
int gen_for_each_element(struct codegen *gen, int map_id, int subprogram, struct helper_arg context);

/* ---- the language core, shared by codegen.c, codegen_operators.c and
 * codegen_statements.c ---- */
/* Stores a value in a fresh stack slot of slot_type (NULL: its own type). */
int gen_value_to_stack(struct codegen *gen, struct value value, const struct type *slot_type);
/* An integer condition sema folded to `value`. */
bool gen_is_known(const struct node *node, bool value);
/* Jumps to false_label when cond is false; nothing at all when sema folded
 * it to true. */
void gen_condition_jump(struct codegen *gen, struct node *cond, int false_label);
/* Jumps to label when cond's truth is `when`; falls through otherwise. */
void gen_branch(struct codegen *gen, struct node *cond, bool when, int label);
/* Whether `node` compares two integers or pointers (==, !=, <, <=, >, >=). */
bool gen_is_scalar_comparison(const struct node *node);
/* Jumps to label when that comparison is `when`: one conditional jump. */
void gen_comparison_jump(struct codegen *gen, struct node *node, bool when, int label);
/* Code for each statement of a list, in order. */
void gen_stmts(struct codegen *gen, struct node *list);
/* The scratch variable a NODE_VAR names. */
struct var_info *gen_var_of(struct codegen *gen, struct node *var);
/* Base register and offset of a scratch variable's slot. */
int gen_var_address(struct codegen *gen, const struct var_info *var, int *offset);
/* @m[k] op= delta (or ++/--) in place: one lookup, insert on a miss.
 * Returns the register holding the new value (old value in *old when asked). */
int gen_update_map_int(struct codegen *gen, struct node *map_node, enum op op, int delta, int *old,
		       const struct node *site);
struct value gen_binary(struct codegen *gen, struct node *node);
struct value gen_unary(struct codegen *gen, struct node *node);
/* left = left op right, signedness from result_type; `site` (the binary or
 * compound-assignment node, NULL for ++/--) checks divisors and shift counts
 * known only at run time. */
void gen_arithmetic(struct codegen *gen, enum op op, int left, int right,
		    const struct type *result_type, const struct node *site);

#endif
