/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The part of semantic analysis that builtins (compiler/builtins/) use to
 * check their calls: reporting errors, typing argument expressions, finding
 * maps, and describing the ring-buffer events their calls send. Only the
 * builtins and sema.c include this.
 */
#ifndef SONDE_SEMA_INTERNAL_H
#define SONDE_SEMA_INTERNAL_H

#include "sema.h"

/* Reports `file:line:col: error:` (only in the reporting pass) and counts it. */
void sema_error(struct sema *sema, struct src_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Types an expression (node->type), reporting what is wrong with it. */
void sema_check_expr(struct sema *sema, struct node *node);
bool sema_is_int(const struct node *node);       /* integer or pointer */
bool sema_is_string(const struct node *node);
bool sema_is_int_constant(struct node *node);    /* an integer known at compile time */
/* The map a NODE_MAP names, made on first use; sets map_node->map_id. */
struct map_desc *sema_map_for(struct sema *sema, struct node *map_node);
/* Checks the keys of @m[keys] and merges their type into the map's key type. */
struct map_desc *sema_check_map_access(struct sema *sema, struct node *map_node);

/* The event a call sends (made once, reused by later passes). */
struct event_desc *sema_new_event(struct sema *sema, struct node *call, enum event_kind kind);
/* Appends a value of `type` to the event's record, 8-byte aligned. */
void sema_event_add_arg(struct event_desc *event, struct type *type, enum arg_conversion conv,
			const char *strftime_format);
/* printf/system/cat/row: a literal format, then values checked against it. */
struct event_desc *sema_check_format_call(struct sema *sema, struct node *call,
					  struct node *format, enum event_kind kind);

/* Type names and C definitions (sema_types.c). */
/* sonde's integer type names ("uint32", "pid_t", "unsigned long"), or NULL. */
struct type *parse_int_type_name(const char *name);
/* A type as written ("struct task_struct *", "enum colour", "void *"):
 * integer names, the script's definitions, then BTF. NULL with *error set
 * to a sentence (the caller frees it). */
struct type *sema_resolve_type(struct sema *sema, const char *name, char **error);
/* A one-word type name: an integer name or a script's typedef; or NULL. */
struct type *sema_plain_type_name(const struct sema *sema, const char *name);
/* An enumerator the script defined: its value and its enum's 8-byte type. */
bool sema_enumerator(const struct sema *sema, const char *name, int64_t *value, struct type **type);
/* Lays out the script's struct, union, enum and typedef definitions
 * (ast.definitions); 0, or -1 after reporting errors. */
int sema_define_types(struct sema *sema, struct node *definitions);
void sema_check_cast(struct sema *sema, struct node *node);
/* Records, current bpftrace's named tuples `(a = 1, b = "x")`: the tuple's
 * type gets the names of node->rhs; `$r.a` becomes `$r.N` (the node turns
 * into a NODE_TUPLE_INDEX; false when the tuple has no such field, after
 * an error if it is a record). */
void sema_name_record_fields(struct sema *sema, struct node *tuple);
/* 1: rewritten; 0: not a record; -1: a record without that field (reported). */
int sema_record_field_index(struct sema *sema, struct node *field);
/* Tuples share storage only with the same field names (none, or a record's,
 * in any order: a record keeps the order it was first given). */
bool sema_same_field_names(const struct type *a, const struct type *b);
/* tuple (a fresh one) with the field names of like, which has as many fields. */
struct type *sema_keep_field_names(struct type *tuple, const struct type *like);

/* Map declarations (sema_maps.c): `let @m = kind(n)` makes the map with that
 * BPF kind and size; 0, or -1 after reporting errors. Once every use is
 * typed, sema_check_declared_maps reports a declared map never used and a
 * kind that does not suit the values. */
int sema_declare_maps(struct sema *sema, struct node *definitions);
void sema_check_declared_maps(struct sema *sema);
/* Was this field, element or dereference read from a process's memory
 * (through a user pointer)? Then a pointer read there points into the
 * process too: sema_user_pointer_if gives such a pointer type that mark. */
bool sema_reached_from_user(const struct node *node);
struct type *sema_user_pointer_if(struct type *type, const struct node *node);
/* ---- the language core, shared by sema.c and sema_operators.c ---- */
void sema_check_binary(struct sema *sema, struct node *node);
void sema_check_unary(struct sema *sema, struct node *node);
/* Constant divisors of zero and shift counts outside 0..63 are errors; a
 * divisor known only at run time gets a check site (node->check_id). */
void sema_check_operand_range(struct sema *sema, struct node *node, enum op op, struct node *rhs,
			      struct src_loc loc);

/* Scratch variables (sema_vars.c). */
/* The $name in scope: the innermost `let` one, else one assigned without `let`. */
struct var_info *sema_var_find(struct sema *sema, const char *name);
/* Whether $name was in scope somewhere in this block (for the error). */
bool sema_var_was_declared(struct sema *sema, const char *name);
/* `let $name`: a new slot, visible until its block's scope closes. */
struct var_info *sema_var_declare(struct sema *sema, const char *name, struct type *type);
void sema_var_default_int(struct sema *sema, struct node *var);
/* A block's scope: open returns the mark that close goes back to. */
int sema_scope_open(struct sema *sema);
void sema_scope_close(struct sema *sema, int mark);
/* $var = value of type: finds or makes its slot, widening its type. */
void sema_var_assign(struct sema *sema, struct node *var, struct type *type);
/* Widens a value type so both a and b fit: ints become 64-bit, strings take
 * the larger size. NULL when the two cannot share storage. */
struct type *sema_merge_types(struct type *a, struct type *b);

/* Rewrites of the tree around the checks (sema_rewrite.c). */
void sema_desugar(struct node *node);
void sema_join_printf_runs(struct ast *ast, struct node **link);

#endif
