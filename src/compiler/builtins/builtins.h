/*
 * Builtin functions: the seam where functions are added.
 *
 * Each family of functions lives in one file of this directory (output.c,
 * maps.c, strings.c, ...), and each function is one record there: its name,
 * how many arguments it takes, its semantic check (types, events) and its
 * code generator (IR). builtins.c strings the families' tables together.
 * sema.c and codegen.c never name a function: they look the call up here and
 * run the record's callbacks.
 */
#ifndef SONDE_BUILTINS_H
#define SONDE_BUILTINS_H

#include <stdbool.h>

struct sema;
struct codegen;
struct node;
struct value;

typedef void (*function_check)(struct sema *sema, struct node *call);
typedef struct value (*function_generate)(struct codegen *gen, struct node *call);

struct function_def {
	const char *name;        /* NULL ends a family's table */
	int min_args;
	int max_args;            /* -1: variadic */
	function_check check;    /* types the call and its arguments; sets call->type */
	function_generate generate;
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
extern const struct function_def builtins_aggregations[];
extern const struct function_def builtins_tool_output[];

/* NULL when name is not a builtin function. */
const struct function_def *function_lookup(const char *name);

#endif
