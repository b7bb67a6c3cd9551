/*
 * The picture a tool draws of what it prints: `--svg FILE`, a flame graph of
 * the stacks print_stacks() prints, and `--heatmap FILE`, a heat map of the
 * histograms print_log2_hist()/print_linear_hist() print, one column per
 * interval.
 *
 * The file is written anew each time the printer runs (through a temporary
 * file renamed over it), so it always holds a whole picture of what was
 * printed so far, whenever the run ends. A heat map's column gathers the
 * printer calls of one interval: a tool may print several histograms per
 * interval (runqlat's system-wide one and its per-process ones, only one
 * of them filled), so calls less than half a second apart share a column.
 */
#include "runtime/runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../render/flamegraph.h"
#include "../render/heatmap.h"

#define PICTURE_COLUMN_GAP_NS 500000000ull

/* Writes svg to the picture's file; 0 or -errno. */
static int picture_write(const struct picture *picture, const struct strbuf *svg)
{
	char *temporary = xasprintf("%s.tmp%d", picture->request.path, (int)getpid());
	FILE *file = fopen(temporary, "w");
	int err = 0;

	if (!file) {
		err = -errno;
	} else {
		if (svg->length && fwrite(svg->data, 1, svg->length, file) != svg->length)
			err = -errno;
		if (fclose(file) != 0 && !err)
			err = -errno;
		if (!err && rename(temporary, picture->request.path) != 0)
			err = -errno;
	}
	if (err)
		unlink(temporary);
	free(temporary);
	return err;
}

static void picture_report(struct picture *picture, int err, const char *what)
{
	if (err < 0 && !picture->failed) {
		fprintf(stderr, "writing the %s to %s failed: %s\n", what, picture->request.path,
			strerror(-err));
		picture->failed = true;
	}
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
	} else {
		err = picture_write(picture, &svg);
		picture_report(picture, err, "flame graph");
		if (err == 0) {
			uint64_t samples = 0;
			for (int i = 0; i < stacks->stacks.count; i++)
				samples += stacks->stacks.items[i].count;
			fprintf(stderr, "Wrote a flame graph of %d stacks (%llu %s) to %s\n",
				stacks->stacks.count, (unsigned long long)samples,
				picture->request.count_name ? picture->request.count_name : "samples",
				picture->request.path);
		}
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
	} else {
		picture_report(picture, picture_write(picture, &svg), "heat map");
	}
	strbuf_free(&svg);
}

void picture_free(struct picture *picture)
{
	heatmap_free(&picture->heatmap);
}
