/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Aggregations: count, sum, avg, min, max, stats, hist, lhist, tseries, each one
 * record in a file of this directory.
 *
 * A record says everything about its aggregation, from the call in a
 * script to the line printed: the builtin function (name, arguments, type
 * check, and the IR that updates the map on each event), how its value is
 * laid out per CPU, whether its keys carry a bucket number, how CPUs' copies
 * fold into one number, how a whole map of it prints in text and JSON, and
 * the Prometheus metric family it becomes under sonde serve. A type of
 * kind TYPE_AGGREGATION points at its record; nothing else in
 * the tree asks which aggregation a value is. The constant parameters of a
 * call (hist's bits, lhist's range, tseries' interval) live in the type's
 * aggregation_params, whose slots only the record's own file reads: a new
 * aggregation is one file and one line in aggregation_lookup's table.
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
struct metric_type;
struct metric_writer;
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
	/* compile_options.hist_sums (sonde serve): bytes of a value that also
	 * sums what it counts, { u64 count; s64 sum; }, so an exported
	 * histogram's _sum is exact; 0 when the aggregation keeps no such sum */
	int summed_value_size;
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
	/* Bucketed: the largest value bucket `index` holds, a Prometheus `le`
	 * bound; false (nothing written) for a bucket no value reaches and for
	 * one with no upper bound. */
	bool (*put_bucket_upper)(struct strbuf *sb, const struct type *type, int index);
	/* Bucketed, index >= 1: the least value bucket `index` holds; false
	 * for a bucket no value reaches. Tool output lays buckets out as
	 * libbpf-tools with it (runtime/toolprint.c). */
	bool (*bucket_low)(const struct type *type, int index, int64_t *low);

	/* Prometheus (sonde serve, serve/metrics.h): the metric family a map
	 * of it becomes, and the family's samples written at a scrape, as
	 * print writes the map at exit. NULL where it is not exported. */
	const struct metric_type *metric_type;
	void (*put_metrics)(struct metric_writer *out, const struct map_snapshot *snap);
};

extern const struct aggregation aggregation_count;
extern const struct aggregation aggregation_sum;
extern const struct aggregation aggregation_avg;
extern const struct aggregation aggregation_min;
extern const struct aggregation aggregation_max;
extern const struct aggregation aggregation_stats;
extern const struct aggregation aggregation_hist;
extern const struct aggregation aggregation_lhist;
extern const struct aggregation aggregation_tseries;

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
/* In aggregation_add: the constant 1 rather than a register. */
#define AGGREGATION_ONE (-1)
/* In aggregation_add: nothing added to the second u64. */
#define AGGREGATION_NOTHING (-2)
/* Adds `amount` (a register or AGGREGATION_ONE) to the u64 at the start of
 * the value and `second` (a register, AGGREGATION_ONE or
 * AGGREGATION_NOTHING) to the u64 after it on a hit, or inserts them on a
 * miss. */
void aggregation_add(struct codegen *gen, struct aggregation_site *site, int amount, int second);
/* hist/lhist: one more in the bucket of `value`, and when the map keeps
 * sums (summed_value_size) the value added to the bucket's sum. */
void aggregation_add_to_bucket(struct codegen *gen, struct aggregation_site *site, int value);
/* Whether a bucketed map's values carry their sums (summed_value_size). */
bool aggregation_map_has_sums(const struct map_desc *map);
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

/* The type of an aggregation's value (a map's value made by it). */
struct type *type_aggregation(const struct aggregation *aggregation, bool is_signed);
/* hist, lhist: their maps' keys carry a bucket after the user's key. */
bool type_is_bucketed(const struct type *type);

#endif
