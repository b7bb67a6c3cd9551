/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kernel types from BTF (/sys/kernel/btf/vmlinux and module BTF), turned
 * into sonde types on demand.
 *
 * Loading is lazy: nothing here touches /sys/kernel/btf until a program
 * needs a kernel type. Conversion is lazy too: a struct reached through a
 * pointer becomes a TYPE_RECORD with is_incomplete set and no fields; its
 * fields are converted only when btf_complete_record is called (so
 * task_struct -> mm -> ... does not convert half the kernel).
 *
 * Conversion rules: integers, enums and bools become TYPE_INT of their size
 * and signedness; typedefs and const/volatile/restrict are looked through;
 * char arrays become TYPE_STRING of the array size; other arrays TYPE_ARRAY;
 * pointers TYPE_POINTER (is_user_pointer false) to the converted pointee
 * (void and function pointers: pointee NULL); structs and unions TYPE_RECORD
 * named "struct NAME"/"union NAME" (is_union for unions), with every member
 * at its byte offset, bitfields with bitfield_bits/bitfield_offset, and
 * anonymous struct/union members flattened into the parent's fields.
 *
 * Functions return 0 or a negative errno; they never print.
 */
#ifndef SONDE_BTF_H
#define SONDE_BTF_H

#include <stdbool.h>
#include <stdint.h>

#include "../common/types.h"
#include "../common/util.h"

/* True when kernel BTF can be loaded (loads it on first call). */
bool btf_available(void);

/* The sonde type for a C type name as written in a program: "struct
 * task_struct", "union bpf_attr", "enum pid_type", "pid_t", "u64",
 * "unsigned int"... NULL when BTF has no such type. */
struct type *btf_type_by_name(const char *name);

/* A struct known only by its name ("struct __kernel_timespec"), looked up in
 * BTF when btf_complete_record is first called on it: lets tracefs type
 * pointer fields without loading BTF for programs that never follow them. */
struct type *btf_lazy_record(const char *name);

/* Converts the fields of a record whose is_incomplete is set. */
void btf_complete_record(struct type *record);

/* A kernel function's parameters as a TYPE_RECORD (field i = parameter i,
 * named as in the source, offset 8*i: the u64-array context of fentry) and
 * its return type (NULL for void). -ENOENT if the function has no BTF. */
int btf_function_args(const char *function, struct type **args_record, struct type **return_type);

/* BTF id of a kernel function, and the fd of the BTF object holding it (0 for
 * vmlinux, else a module BTF fd owned by this module), for fentry/fexit. */
int btf_function_id(const char *function, int *btf_id, int *btf_obj_fd);

/* The vmlinux BTF id of the per-CPU variable `name` (percpu_kaddr()), and
 * its size in bytes; -ENOENT when the kernel's BTF has no such variable. */
int btf_percpu_var_id(const char *name, int *size);

/* Arguments of raw tracepoint `name` (from the btf_trace_NAME typedef,
 * without its leading `void *` data pointer) as a TYPE_RECORD laid out like
 * btf_function_args. */
int btf_tracepoint_args(const char *name, struct type **args_record);

/* A tracepoint's record as `args` sees it, from the kernel's
 * struct trace_event_raw_NAME (the common header and the trailing __data
 * are left out; offsets are from the start of the record, as in the format
 * file). For when tracefs has no format file to read. Only events that are
 * their own class have such a struct; events sharing a class (block_rq_issue
 * uses trace_event_raw_block_rq) cannot be found from their name. */
int btf_tracepoint_record(const char *name, struct type **record);

/* The C definition of "struct NAME", "union NAME" or "enum NAME" as -lv
 * prints it (ending "};\n\n"), in *text for the caller to free; -ENOENT
 * when BTF has no such type. */
int btf_type_definition(const char *name, char **text);

/* Value of a kernel enum constant (SKB_DROP_REASON_NOT_SPECIFIED, ...). */
int btf_enum_value(const char *name, int64_t *value);
/* The same, with the constant's type: its enum's, 8 bytes wide. */
int btf_enum_constant(const char *name, int64_t *value, struct type **type);


/* Drops every cached conversion. Call after type_free_all(), which frees
 * the types this module handed out (the BTF itself stays loaded). */
void btf_forget_types(void);

/* A name found in BTF: the module holding it (NULL for vmlinux) and the
 * name with the searched prefix removed. */
struct btf_name {
	char *module;
	char *name;
};

typedef VEC(struct btf_name) btf_name_list;

/* Appends every BTF type of `kind` (BTF_KIND_FUNC, BTF_KIND_TYPEDEF...)
 * whose name starts with prefix (and is longer), from vmlinux and, when
 * with_modules, from every module's BTF. 0, or -ENOENT without kernel BTF. */
int btf_list_names(int kind, const char *prefix, bool with_modules, btf_name_list *out);
void btf_name_list_free(btf_name_list *list);

/* Whether vmlinux BTF (modules not searched) has a type of `kind` named
 * name: one lookup where btf_list_names would list them all. */
bool btf_vmlinux_has(int kind, const char *name);

/* C declarations of a function's parameters ("struct file *file"), then
 * its return type as "TYPE retval" unless void; or of a raw tracepoint's
 * arguments (without the data pointer). For -lv. 0 or -ENOENT. */
typedef VEC(char *) btf_decl_list;
int btf_function_declarations(const char *function, btf_decl_list *out);
int btf_tracepoint_declarations(const char *name, btf_decl_list *out);
void btf_decl_list_free(btf_decl_list *list);

#endif
