/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Map snapshots, shared by the printers of print.c (bpftrace's layouts) and
 * toolprint.c (libbpf-tools' layouts): every key and every CPU's copy of
 * each value, read from the kernel at once, and the ways to fold them.
 */
#ifndef SONDE_SNAPSHOT_H
#define SONDE_SNAPSHOT_H

#include "runtime/runtime.h"

struct map_snapshot {
	int count;
	uint32_t key_size;     /* full BPF key */
	uint32_t value_stride; /* bytes per CPU */
	int ncpus;             /* copies of each value */
	unsigned char *keys;
	unsigned char *values;
};

/* One map entry, or one histogram (hist/lhist entries grouped by user key). */
struct print_entry {
	const unsigned char *key;
	const unsigned char *value;
	uint64_t order;     /* value to sort by, when sorting by value; a histogram's total */
	uint64_t *buckets;  /* hist/lhist groups: counts by bucket number (program.h) */
	int bucket_count;
	uint64_t sum;       /* hist/lhist keeping sums (summed_value_size): the values, s64 */
};

int snapshot_read(const struct map_desc *map, struct map_snapshot *snap);
void snapshot_free(struct map_snapshot *snap);
const unsigned char *snapshot_key(const struct map_snapshot *snap, int i);
const unsigned char *snapshot_value(const struct map_snapshot *snap, int i);
/* The number a count/sum/min/max/avg/integer value stands for, CPUs folded. */
uint64_t snapshot_fold(const struct map_snapshot *snap, const struct type *type,
		       const unsigned char *value);
/* Key order by meaning: numbers numerically, strings alphabetically. */
int snapshot_compare_keys(const struct type *type, const unsigned char *a, const unsigned char *b);
/* One key element's text as bpftrace prints it in @m[...] (pointers in hex,
 * stacks indented by 4). */
void snapshot_key_text(struct strbuf *sb, const struct type *type, const unsigned char *data);
/* Bytes of the user key as stored (a hist/lhist bucket number follows). */
int snapshot_user_key_size(const struct map_desc *map);
/* A hist/lhist map's histograms, one per user key, in key-byte order;
 * returns how many. Free with snapshot_histograms_free. */
int snapshot_histograms(const struct map_desc *map, const struct map_snapshot *snap,
			struct print_entry **groups);
void snapshot_histograms_free(struct print_entry *groups, int count);

/* The layouts of a whole map that aggregations print with (their records
 * choose one, aggregations/): a number per key (count, sum, min, max and
 * plain values), an average per key (avg; with is_stats, stats' count,
 * average and total), a histogram per key (hist, lhist). */
struct strbuf;
void print_map_numbers(struct strbuf *sb, const struct map_desc *map,
		       const struct map_snapshot *snap, int top, int div, bool json);
void print_map_averages(struct strbuf *sb, const struct map_desc *map,
			const struct map_snapshot *snap, int top, int div, bool json, bool is_stats);
void print_map_histograms(struct strbuf *sb, const struct map_desc *map,
			  const struct map_snapshot *snap, int top, int div, bool json);

/* Pieces of those layouts, for an aggregation that draws its own: an
 * entry's name in text (`@m[key]`), its start (text `@m[key]: `, or
 * `@m[key]:` and a new line when value_below; JSON `"key": `), and the
 * JSON record around a map's entries. */
void print_entry_name(struct strbuf *sb, const struct map_desc *map, const unsigned char *key);
void print_entry_start(struct strbuf *sb, const struct map_desc *map, const unsigned char *key,
		       bool json, bool value_below);
void print_json_header(struct strbuf *sb, const struct map_desc *map, const char *kind);
void print_json_footer(struct strbuf *sb, const struct map_desc *map);

#endif
