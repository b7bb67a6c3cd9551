/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builtin functions and variables: the seam where they are added.
 *
 * Each family lives in one file of this directory (output.c, maps.c,
 * strings.c, task.c, context.c, ...), and each function or variable is one
 * record there: its name, what it takes, its semantic check (types, events)
 * and its code generator (IR). builtins.c strings the families' tables
 * together. sema.c and codegen.c never name a builtin: they look the name
 * up here and run the record's callbacks.
 */
#ifndef SONDE_BUILTINS_H
#define SONDE_BUILTINS_H

#include <stdbool.h>
#include <stdint.h>

struct sema;
struct codegen;
struct node;
struct value;

typedef void (*function_check)(struct sema *sema, struct node *call);
typedef struct value (*function_generate)(struct codegen *gen, struct node *call);
struct type;

struct function_def {
	const char *name;        /* NULL ends a family's table */
	int min_args;
	int max_args;            /* -1: variadic */
	function_check check;    /* types the call and its arguments; sets call->type */
	function_generate generate;
	/* Optional: generates the call's value straight into the stack at
	 * `offset` (a tuple's field) rather than into a temporary copied there;
	 * false, nothing generated, when this call cannot (str() of a string). */
	bool (*generate_into)(struct codegen *gen, struct node *call, int offset);
	bool is_aggregation;     /* only valid as `@map = f(...)` */
	bool needs_unsafe;       /* refused without --unsafe */
	bool callable_bare;      /* `kstack` alone means kstack() */
	bool key_follows_map;    /* f(@m, k1, k2) means f(@m[k1, k2]) */
	bool joins_lines;        /* consecutive calls with literal formats become one record */
};

/* The usual start of a record: name(min..max args), with check_NAME and
 * generate_NAME as its callbacks. */
#define FUNCTION(fname, min, max) \
	.name = #fname, .min_args = (min), .max_args = (max), .check = check_##fname, \
	.generate = generate_##fname

/* The families' tables, each ended by an entry without a name. */
extern const struct function_def builtins_output[];
extern const struct function_def builtins_time[];
extern const struct function_def builtins_strings[];
extern const struct function_def builtins_net[];
extern const struct function_def builtins_maps[];
extern const struct function_def builtins_stacks[];
extern const struct function_def builtins_kernel[];
extern const struct function_def builtins_tool_output[];
extern const struct function_def builtins_options[];
extern const struct function_def builtins_context[];
extern const struct function_def builtins_unsupported[];

/* NULL when name is not a builtin function. */
const struct function_def *function_lookup(const char *name);

/*
 * A builtin variable (pid, comm, args, arg0, ...). The check sets
 * node->type (and reports what the probe lacks); the generator reads the
 * value. Variables are looked up before kernel constants.
 */
struct variable_def {
	const char *name;        /* NULL ends a family's table */
	function_check check;
	function_generate generate;
	bool numbered;           /* name then a number 0-15 (arg0 .. arg15), put in node->int_value */
	unsigned needs;          /* probe_feature bits the point must offer */
	bool reads_pid_tgid;     /* shares the prologue's bpf_get_current_pid_tgid() */
	bool is_stable;          /* the same value all through one run of a probe (pid,
				  * cpu): two reads of @m[pid] name one element */
	/* v.field read by the variable itself (args: from the probe's context) */
	function_generate generate_field;
	/* v->field and *v see this pointer (curtask: the current task_struct);
	 * NULL when the kernel has no such type */
	struct type *(*points_to)(void);
};

/* The usual start of a variable's record: check_NAME and generate_NAME. */
#define VARIABLE(vname) .name = #vname, .check = check_##vname, .generate = generate_##vname

extern const struct variable_def variables_task[];
extern const struct variable_def variables_context[];
extern const struct variable_def variables_time[];
extern const struct variable_def variables_kernel[];

/* NULL when name is not a builtin variable; *index gets a numbered one's number. */
const struct variable_def *variable_lookup(const char *name, uint64_t *index);

#endif
