/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The picture a tool draws of what it prints: `--svg FILE`, a flame graph of
 * the stacks print_stacks() prints, and `--heatmap FILE`, a heat map of the
 * histograms print_log2_hist()/print_linear_hist() print, one column per
 * interval.
 *
 * The file is written anew each time the printer runs (outfile_replace():
 * a temporary file renamed over it), so it always holds a whole picture of
 * what was printed so far, whenever the run ends. A device or FIFO
 * (/dev/stdout) cannot be rewritten: it gets the last picture once, when
 * the run ends (picture_finish). Where the file goes is decided, and
 * refused if it cannot be written, before anything is loaded (run.c).
 *
 * A heat map's column gathers the
 * printer calls of one interval: a tool may print several histograms per
 * interval (runqlat's system-wide one and its per-process ones, only one
 * of them filled), so calls less than half a second apart share a column.
 */
#include "runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../render/flamegraph.h"
#include "../render/heatmap.h"

#define PICTURE_COLUMN_GAP_NS 500000000ull

void picture_init(struct picture *picture, struct outfile *file)
{
	picture->file = file;
	strbuf_init(&picture->pending);
	strbuf_init(&picture->note);
}

static void picture_report(struct picture *picture, int err, const char *what)
{
	if (err < 0 && !picture->failed) {
		fprintf(stderr, "writing the %s to %s failed: %s\n", what, picture->request.path,
			strerror(-err));
		picture->failed = true;
	}
}

/* Writes svg to the file, then says what the note says, if anything. */
static void picture_store(struct picture *picture, const struct strbuf *svg, const char *what)
{
	int err = outfile_replace(picture->file, svg->data ? svg->data : "", svg->length);

	picture_report(picture, err, what);
	if (err == 0 && picture->note.length)
		fputs(picture->note.data, stderr);
}

/* Writes svg to the picture's file, or keeps it for the end when the file
 * is a device or FIFO, which cannot be rewritten. */
static void picture_write(struct picture *picture, struct strbuf *svg, const char *what)
{
	if (picture->file->kind == OUTFILE_IN_PLACE) {
		struct strbuf last = picture->pending;
		picture->pending = *svg;
		*svg = last;
		picture->pending_what = what;
		return;
	}
	picture_store(picture, svg, what);
}

int picture_finish(struct picture *picture)
{
	if (picture->request.kind == PICTURE_NONE)
		return 0;
	if (picture->file->kind == OUTFILE_IN_PLACE && picture->pending_what) {
		picture_store(picture, &picture->pending, picture->pending_what);
		picture->pending_what = NULL;
	}
	return picture->failed ? -1 : 0;
}

void picture_flamegraph(struct picture *picture, const struct folded_set *stacks)
{
	struct flamegraph_options options = { .title = picture->request.title,
					      .count_name = picture->request.count_name };
	struct strbuf svg;
	char *error = NULL;

	strbuf_init(&svg);
	int err = flamegraph_svg(stacks, NULL, &options, &svg, &error);
	if (err < 0) {
		fprintf(stderr, "drawing the flame graph failed: %s\n", error ? error : strerror(-err));
		free(error);
		picture->failed = true;
	} else {
		uint64_t samples = 0;
		for (int i = 0; i < stacks->stacks.count; i++)
			samples += stacks->stacks.items[i].count;
		strbuf_reset(&picture->note);
		strbuf_printf(&picture->note, "Wrote a flame graph of %d stacks (%llu %s) to %s\n",
			      stacks->stacks.count, (unsigned long long)samples,
			      picture->request.count_name ? picture->request.count_name : "samples",
			      picture->request.path);
		picture_write(picture, &svg, "flame graph");
	}
	strbuf_free(&svg);
}

void picture_heatmap_begin(struct picture *picture, const char *unit)
{
	uint64_t now = monotonic_ns();

	if (picture->heatmap.columns.count && now - picture->column_ns < PICTURE_COLUMN_GAP_NS)
		return;
	picture->column_ns = now;
	if (!picture->heatmap.unit && unit)
		picture->heatmap.unit = xstrdup(unit);

	char label[16];
	time_t wall = time(NULL);
	struct tm local;
	localtime_r(&wall, &local);
	strftime(label, sizeof(label), "%H:%M:%S", &local);
	heatmap_begin_column(&picture->heatmap, label);
}

void picture_heatmap_add(struct picture *picture, int64_t low, int64_t high, uint64_t count)
{
	/* several keys' histograms in one interval add up (heatmap.c sums them) */
	if (picture->heatmap.columns.count)
		heatmap_add_bucket(&picture->heatmap, low, high, count);
}

void picture_heatmap_end(struct picture *picture)
{
	struct heatmap_options options = { .title = picture->request.title };
	struct strbuf svg;
	char *error = NULL;

	strbuf_init(&svg);
	int err = heatmap_svg(&picture->heatmap, &options, &svg, &error);
	if (err < 0) {
		fprintf(stderr, "drawing the heat map failed: %s\n", error ? error : strerror(-err));
		free(error);
		picture->failed = true;
	} else {
		picture_write(picture, &svg, "heat map");
	}
	strbuf_free(&svg);
}

void picture_free(struct picture *picture)
{
	heatmap_free(&picture->heatmap);
	if (picture->request.kind == PICTURE_NONE)
		return;
	strbuf_free(&picture->pending);
	strbuf_free(&picture->note);
}
