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
	const char *colors;     /* hot (default), mem, io, java, perl, js, red, green, blue, ... */
	const char *count_name; /* "samples" when NULL */
	bool reverse;           /* stacks reversed before merging (leaf at the root) */
	bool inverted;          /* icicle: the root at the top */
};

/* Draws set as a flame graph SVG appended to out. When before is not NULL
 * the graph is differential: widths from set, and each frame coloured red
 * where it grew from before and blue where it shrank. 0, or -EINVAL with
 * *error set (an option out of range, an empty profile is NOT an error: the
 * SVG then says "No samples"). */
int flamegraph_svg(const struct folded_set *set, const struct folded_set *before,
		   const struct flamegraph_options *options, struct strbuf *out, char **error);

#endif
