/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Latency heat maps: a series of histograms, one per interval, drawn as a
 * self-contained SVG: time on the x axis, the histogram's buckets on the y
 * axis (low latency at the bottom), each cell coloured by its count, hover
 * naming the interval, the bucket's range and the count.
 *
 * The series is filled by the runtime (a histogram tool's --heatmap, one
 * column each time it prints its histogram), or read from a JSON stream of
 * histograms (sonde's and bpftrace's `-f json` hist records, one per
 * interval, optionally with a "time" field).
 */
#ifndef SONDE_HEATMAP_H
#define SONDE_HEATMAP_H

#include <stdint.h>

#include "../common/util.h"

struct heatmap_bucket {
	int64_t low;        /* the bucket holds values in [low, high) */
	int64_t high;
	uint64_t count;
};

struct heatmap_column {
	char *label;        /* the interval's time as printed ("10:02:03"), owned; NULL: its index */
	VEC(struct heatmap_bucket) buckets;
	int merged;         /* buckets.count when it was last sorted and summed */
};

struct heatmap {
	char *unit;         /* "usecs", "msecs", ..., owned; NULL if unknown */
	char *source;       /* the map drawn from a bpftrace JSON stream ("@"), owned */
	VEC(struct heatmap_column) columns;
};

struct heatmap_options {
	const char *title;  /* NULL: "Latency Heat Map" */
	int width;          /* pixels; 0: 1200 */
};

#define HEATMAP_WIDTH_MIN 300
#define HEATMAP_WIDTH_MAX 100000

/* Starts a new column (an interval); the buckets that follow go into it. */
void heatmap_begin_column(struct heatmap *map, const char *label);
void heatmap_add_bucket(struct heatmap *map, int64_t low, int64_t high, uint64_t count);
/* Reads a JSON stream (one record a line) of hist records into map. 0, or
 * -EINVAL with *error naming the line at fault. */
int heatmap_parse_json(struct heatmap *map, const char *text, size_t length, char **error);
/* Appends the SVG to out; 0, or -EINVAL with *error set. */
int heatmap_svg(const struct heatmap *map, const struct heatmap_options *options,
		struct strbuf *out, char **error);
void heatmap_free(struct heatmap *map);

#endif
