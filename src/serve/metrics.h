/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Prometheus renderings an aggregation's record chooses from
 * (aggregations/): the metric family type a map becomes and the writers of
 * its samples, as print.c's layouts are for printing. metrics.c names the
 * family and its labels and calls the record's put_metrics at a scrape.
 */
#ifndef SONDE_SERVE_METRICS_H
#define SONDE_SERVE_METRICS_H

#include <stdbool.h>

struct map_snapshot;

/* A family's Prometheus type and every suffix its samples put after the
 * family's name ("" the name itself), so that two maps that would write
 * the same series are found before serving. */
struct metric_type {
	const char *name;         /* counter, gauge, summary, histogram */
	const char *suffixes[5];  /* NULL-terminated */
};

extern const struct metric_type metric_counter;   /* sonde_x_total */
extern const struct metric_type metric_gauge;     /* sonde_x */
extern const struct metric_type metric_summary;   /* _count, _sum, and an _avg gauge */
extern const struct metric_type metric_histogram; /* _bucket{le}, _count, _sum */

/* One family being written: the map, its names and labels, the output. */
struct metric_writer;

/* A number per key: a counter's or a gauge's samples, the CPUs' copies
 * folded by the record (count, sum, min, max, avg, plain integers). */
void metrics_put_numbers(struct metric_writer *out, const struct map_snapshot *snap);
/* stats: { sum, count } per key as a summary without quantiles, and the
 * average as a gauge family of its own. */
void metrics_put_summaries(struct metric_writer *out, const struct map_snapshot *snap);
/* hist, lhist: a histogram per key, `le` bounds from the record's
 * put_bucket_upper, _sum from the buckets' sums. every_bucket: each scrape
 * has every bucket (lhist: few of them); else up to the highest non-empty
 * one, the first (hist's negatives) only when it is not empty. */
void metrics_put_histograms(struct metric_writer *out, const struct map_snapshot *snap,
			    bool every_bucket);

#endif
