/*
 * Aggregations: count, sum, avg, min, max, stats, hist, lhist, each one
 * record in a file of this directory.
 *
 * A record says everything about its aggregation, from the call in a
 * script to the line printed: the builtin function (name, arguments, type
 * check, and the IR that updates the map on each event), how its value is
 * laid out per CPU, whether its keys carry a bucket number, how CPUs' copies
 * fold into one number, and how a whole map of it prints in text and JSON.
 * A type of kind TYPE_AGGREGATION points at its record; nothing else in
 * the tree asks which aggregation a value is.
 *
 * The map layouts themselves (per-CPU hash or array, bucket numbering) are
 * described in common/program.h.
 */
#ifndef SONDE_AGGREGATION_H
#define SONDE_AGGREGATION_H

#include <stdbool.h>
#include <stdint.h>

#include "../compiler/builtins/builtins.h"

struct codegen;
struct map_desc;
struct map_snapshot;
struct node;
struct sema;
struct strbuf;
struct type;
struct value;

struct aggregation {
	struct function_def function; /* the call: name, arguments, check, update IR */
	int value_size;               /* bytes of each CPU's copy of a value */
	bool keyless_array;           /* without a key: one slot of a per-CPU array */
	bool is_bucketed;             /* a bucket number follows the user key (hist, lhist) */
	/* bucketed: how many buckets a value of this type has */
	int (*bucket_count)(const struct type *type);

	/* @m[k] read in an expression: the CPUs' shares folded in the kernel;
	 * NULL when the value can only be printed */
	struct value (*read)(struct codegen *gen, struct node *node, struct map_desc *map, int key);

	/* The CPUs' copies of one value as one number: what a map sorts by and
	 * what print_top shows. */
	uint64_t (*fold)(const struct map_snapshot *snap, const struct type *type,
			 const unsigned char *value);
	/* A whole map, in text or JSON, as bpftrace prints it. */
	void (*print)(struct strbuf *sb, const struct map_desc *map, const struct map_snapshot *snap,
		      int top, int div, bool json);
	/* Bucketed: a bucket's label in text ("[4, 8)") and its bounds in JSON
	 * ("\"min\": 4, \"max\": 7, "); whether a bucket is ever drawn. */
	void (*put_bucket_label)(struct strbuf *sb, const struct type *type, int index);
	void (*put_bucket_bounds)(struct strbuf *sb, const struct type *type, int index);
	bool (*bucket_is_drawn)(const struct type *type, int index);

	/* Other renderings of a whole map (e.g. Prometheus metrics for an
	 * exporter) belong here, next to print, as one more callback of the
	 * same shape; NULL where an aggregation has none. */
};

extern const struct aggregation aggregation_count;
extern const struct aggregation aggregation_sum;
extern const struct aggregation aggregation_avg;
extern const struct aggregation aggregation_min;
extern const struct aggregation aggregation_max;
extern const struct aggregation aggregation_stats;
extern const struct aggregation aggregation_hist;
extern const struct aggregation aggregation_lhist;

/* NULL when name is not an aggregation function. */
const struct aggregation *aggregation_lookup(const char *name);

/* ---- shared by the records ---- */

/* count/sum/avg/min/max/stats(x): x checked; the value's type made. */
void aggregation_check_simple(struct sema *sema, struct node *call, const struct aggregation *kind);
/* The argument of an aggregation: an integer. */
void aggregation_check_arg(struct sema *sema, struct node *call, struct node *arg);

/* The map element an aggregation call updates: key on the stack (its
 * bucket slot filled from bucket_reg when bucketed) and the looked-up value
 * pointer (0 on a miss). */
struct aggregation_site {
	struct map_desc *map;
	int key;
	int pointer;
};
struct aggregation_site aggregation_begin(struct codegen *gen, int bucket_reg);
/* Adds `amount` (a register, or the constant 1 when amount is -1) to the
 * u64 at the start of the value on a hit (and 1 to the second u64 when
 * with_count), or inserts it on a miss. */
void aggregation_add(struct codegen *gen, struct aggregation_site *site, int amount, bool with_count);
/* min()/max() of the call's argument into the assigned map element. */
void aggregation_update_extreme(struct codegen *gen, struct node *call, bool is_max);

/* How a value read in an expression folds the CPUs' copies. */
enum aggregation_fold {
	FOLD_SUM,      /* the first u64 of every CPU added up */
	FOLD_AVERAGE,  /* { sum, count }: the sums divided by the counts */
	FOLD_MIN,      /* { value, is_set }: the least of the CPUs that set one */
	FOLD_MAX,      /* { value, is_set }: the greatest */
};
/* @m[k] as one number (key on the stack at `key`). */
struct value aggregation_read(struct codegen *gen, struct node *node, struct map_desc *map, int key,
			      enum aggregation_fold how);

/* Per-CPU folds in user space. */
uint64_t aggregation_fold_sum(const struct map_snapshot *snap, const unsigned char *value, int field);
uint64_t aggregation_fold_average(const struct map_snapshot *snap, const unsigned char *value,
				  bool is_signed);
/* The fold callbacks of values that are a u64 per CPU (the sum of the
 * first u64), or { sum, count } per CPU (the mean). */
uint64_t aggregation_fold_total(const struct map_snapshot *snap, const struct type *type,
				const unsigned char *value);
uint64_t aggregation_fold_mean(const struct map_snapshot *snap, const struct type *type,
			       const unsigned char *value);
/* min/max: each CPU holds { value, is_set }; CPUs that never ran it are skipped. */
uint64_t aggregation_fold_extreme(const struct map_snapshot *snap, const unsigned char *value,
				  bool is_max, bool is_signed);

#endif
