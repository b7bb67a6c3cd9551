/*
 * The built-in function table: the seam where functions are added. Each
 * entry names the function, its argument count, the semantic check (in
 * sema.c) and the code generator (in codegen.c). Neither phase has a switch
 * over function names; both look the function up here.
 */
#ifndef SONDE_FUNCTIONS_H
#define SONDE_FUNCTIONS_H

#include "ast.h"

struct sema;
struct codegen;
struct value;

typedef void (*function_check)(struct sema *sema, struct node *call);
typedef struct value (*function_generate)(struct codegen *gen, struct node *call);

struct function_def {
	const char *name;
	int min_args;
	int max_args;            /* -1: variadic */
	bool is_aggregation;     /* only valid as `@map = f(...)` */
	bool needs_unsafe;       /* refused without --unsafe */
	function_check check;
	function_generate generate;
};

/* X(name, min_args, max_args, is_aggregation, needs_unsafe): one line per function.
 * Each needs check_<name> in sema.c and generate_<name> in codegen.c. */
#define FUNCTION_LIST(X)                      \
	X(printf, 1, -1, false, false)        \
	X(print, 1, 3, false, false)          \
	X(time, 0, 1, false, false)           \
	X(strftime, 2, 2, false, false)       \
	X(str, 1, 2, false, false)            \
	X(join, 1, 2, false, false)           \
	X(ntop, 1, 2, false, false)           \
	X(exit, 0, 1, false, false)           \
	X(cat, 1, -1, false, false)           \
	X(system, 1, -1, false, true)         \
	X(signal, 1, 1, false, true)          \
	X(delete, 1, 1, false, false)         \
	X(clear, 1, 1, false, false)          \
	X(zero, 1, 1, false, false)           \
	X(has_key, 1, 1, false, false)       \
	X(len, 1, 1, false, false)            \
	X(strncmp, 3, 3, false, false)        \
	X(kaddr, 1, 1, false, false)          \
	X(bswap, 1, 1, false, false)          \
	X(kstack, 0, 2, false, false)         \
	X(ustack, 0, 2, false, false)         \
	X(ksym, 1, 1, false, false)           \
	X(usym, 1, 1, false, false)           \
	X(buf, 1, 2, false, false)            \
	X(count, 0, 0, true, false)           \
	X(sum, 1, 1, true, false)             \
	X(avg, 1, 1, true, false)             \
	X(min, 1, 1, true, false)             \
	X(max, 1, 1, true, false)             \
	X(stats, 1, 1, true, false)           \
	X(hist, 1, 2, true, false)            \
	X(lhist, 4, 4, true, false)           \
	X(syscall_name, 1, 1, false, false)   \
	X(signal_name, 1, 1, false, false)    \
	X(errno_name, 1, 1, false, false)     \
	X(softirq_name, 1, 1, false, false)   \
	X(row, 2, -1, false, false)           \
	X(printf_matching, 2, -1, false, false) \
	X(print_log2_hist, 2, 5, false, false) \
	X(print_linear_hist, 2, 5, false, false) \
	X(print_top, 3, -1, false, false)     \
	X(print_stacks, 1, 4, false, false)

#define DECLARE_FUNCTION(name, min, max, agg, unsafe)              \
	void check_##name(struct sema *sema, struct node *call);    \
	struct value generate_##name(struct codegen *gen, struct node *call);
FUNCTION_LIST(DECLARE_FUNCTION)
#undef DECLARE_FUNCTION

/* NULL when name is not a built-in function. */
const struct function_def *function_lookup(const char *name);
const struct function_def *function_get(int func_id);

#endif
