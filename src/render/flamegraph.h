/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Flame graphs: folded stacks drawn as a self-contained, interactive SVG
 * (inline style and script, nothing fetched): hover names a frame with its
 * samples and share, click zooms, "Reset Zoom" returns, search highlights
 * frames matching a regular expression and shows their share. Options are
 * flamegraph.pl's.
 */
#ifndef SONDE_FLAMEGRAPH_H
#define SONDE_FLAMEGRAPH_H

#include <stdbool.h>

#include "../common/util.h"
#include "folded.h"

struct flamegraph_options {
	const char *title;      /* NULL: "Flame Graph" ("Icicle Graph" inverted) */
	const char *subtitle;   /* NULL: none */
	int width;              /* pixels; 0: 1200 */
	double min_width;       /* frames narrower than this many pixels are left out; 0: 0.1 */
	bool min_width_set;     /* min_width as given, even 0 (every frame drawn) */
	const char *colors;     /* hot (default), mem, io, java, perl, js, red, green, blue, ... */
	const char *count_name; /* "samples" when NULL */
	bool reverse;           /* stacks reversed before merging (leaf at the root) */
	bool inverted;          /* icicle: the root at the top */
};

/* The merged stacks as folded lines (reversed for --reverse), to out. */
void flamegraph_write_folded(const struct folded_set *set, bool reverse, struct strbuf *out);

#define FLAMEGRAPH_WIDTH_MIN 100
#define FLAMEGRAPH_WIDTH_MAX 100000

/* 0, or -EINVAL with *error set to one sentence naming the option out of
 * range (flamegraph_svg checks them too). */
int flamegraph_check_options(const struct flamegraph_options *options, char **error);
/* Draws set as a flame graph SVG appended to out. When before is not NULL
 * the graph is differential: widths from set, and each frame coloured red
 * where it grew from before and blue where it shrank. 0, or -EINVAL with
 * *error set (an option out of range; -EOVERFLOW when a set's counts were
 * cut at FOLDED_TOTAL_MAX). An empty profile is NOT an error: the SVG then
 * says "No samples". */
int flamegraph_svg(const struct folded_set *set, const struct folded_set *before,
		   const struct flamegraph_options *options, struct strbuf *out, char **error);

#endif
