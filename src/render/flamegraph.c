/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Flame graphs: folded stacks laid out as rectangles and written as one
 * self-contained SVG.
 *
 * Layout is one pass over the stacks sorted frame by frame: consecutive
 * stacks that share their first frames share those rectangles, so each
 * stack only closes the frames where it departs from the one before and
 * opens its own from there. Each rectangle records where it starts and how
 * many samples it spans (in samples, not pixels); the page's script zooms
 * by laying out again from those numbers. The root "all" spans everything.
 *
 * Colours come from a hash of the frame's name, so a function keeps its
 * colour from one graph to the next. A differential graph takes widths
 * from the second profile and colours each frame by how its samples
 * changed from the first: red grew, blue shrank, the deeper the more.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph.h"
#include "scripts.h"
#include "svg.h"

#define FLAME_FRAME_HEIGHT 16
#define FLAME_FONT_SIZE 12
#define FLAME_FONT_WIDTH 0.59     /* of the font size: an average glyph of Verdana */
#define FLAME_PAD 10
#define FLAME_TOP (FLAME_FONT_SIZE * 3)          /* title, subtitle */
#define FLAME_BOTTOM (FLAME_FONT_SIZE * 2 + 10)  /* the details line */
/* Deeper frames are left out (and the picture says so): the SVG's height
 * must stay a number a browser draws, whatever the input. */
#define FLAME_DEPTH_MAX 10000

struct flame_node {
	const char *name;         /* into the stack's frames; not NUL-terminated */
	size_t name_length;
	int depth;                /* 0: "all" */
	uint64_t start;           /* samples before it at its depth */
	uint64_t samples;
	int64_t delta;            /* differential: samples now minus samples before */
};

struct flame_layout {
	VEC(struct flame_node) nodes;
	uint64_t total;
	int64_t max_delta;        /* largest |delta| */
};

/* One stack with its counts, as laid out. */
struct flame_stack {
	const char *frames;
	uint64_t count;
	uint64_t before;
};

static int flame_stack_compare(const void *a, const void *b);

/* Opens nodes for the stack's frames past the ones it shares with the
 * path so far, and adds its samples to every node on its path. */
static void flame_add_stack(struct flame_layout *layout, const struct flame_stack *stack,
			    int *path, int *path_length, int path_capacity)
{
	const char *frame = stack->frames;
	int depth = 1;

	layout->nodes.items[0].samples += stack->count;
	layout->nodes.items[0].delta += (int64_t)stack->count - (int64_t)stack->before;
	while (*frame && depth < path_capacity) {
		const char *end = strchr(frame, ';');
		size_t length = end ? (size_t)(end - frame) : strlen(frame);
		struct flame_node *node = NULL;

		if (depth < *path_length) {
			node = &layout->nodes.items[path[depth]];
			if (node->name_length != length || memcmp(node->name, frame, length) != 0) {
				*path_length = depth;
				node = NULL;
			}
		}
		if (!node) {
			struct flame_node fresh = {
				.name = frame, .name_length = length, .depth = depth,
				.start = layout->total,
			};

			vec_push(&layout->nodes, fresh);
			path[depth] = layout->nodes.count - 1;
			*path_length = depth + 1;
			node = &layout->nodes.items[path[depth]];
		}
		node->samples += stack->count;
		node->delta += (int64_t)stack->count - (int64_t)stack->before;
		depth++;
		frame = end ? end + 1 : frame + length;
	}
	/* a shorter stack after a longer one ends the longer one's path */
	if (*path_length > depth)
		*path_length = depth;
	layout->total += stack->count;
}

/* Gathers the stacks to draw: set's, with before's counts beside them for
 * a differential graph, every stack's frames reversed for --reverse. */
static void flame_gather(const struct folded_set *set, const struct folded_set *before,
			 bool reverse, struct folded_set *now, struct folded_set *then)
{
	for (int i = 0; i < set->stacks.count; i++) {
		const struct folded_stack *stack = &set->stacks.items[i];
		char *frames = reverse ? folded_reverse_frames(stack->frames) : xstrdup(stack->frames);

		folded_add(now, frames, stack->count);
		free(frames);
	}
	for (int i = 0; before && i < before->stacks.count; i++) {
		const struct folded_stack *stack = &before->stacks.items[i];
		char *frames = reverse ? folded_reverse_frames(stack->frames) : xstrdup(stack->frames);

		folded_add(then, frames, stack->count);
		/* a stack that vanished still takes part, with no width */
		folded_add(now, frames, 0);
		free(frames);
	}
}

void flamegraph_write_folded(const struct folded_set *set, bool reverse, struct strbuf *out)
{
	struct folded_set reversed = { 0 };

	if (!reverse) {
		folded_write(set, out);
		return;
	}
	flame_gather(set, NULL, true, &reversed, NULL);
	folded_write(&reversed, out);
	folded_free(&reversed);
}

static void flame_lay_out(const struct folded_set *now, const struct folded_set *then,
			  struct flame_layout *layout)
{
	struct flame_stack *stacks = xcalloc(now->stacks.count + 1, sizeof(*stacks));
	struct flame_node root = { .name = "all", .name_length = 3 };
	int path_capacity = 1, path_length = 1;
	int *path;

	for (int i = 0; i < now->stacks.count; i++) {
		int position = then ? folded_find(then, now->stacks.items[i].frames) : -1;
		size_t frames = 2;

		stacks[i].frames = now->stacks.items[i].frames;
		stacks[i].count = now->stacks.items[i].count;
		stacks[i].before = position >= 0 ? then->stacks.items[position].count : 0;
		for (const char *c = stacks[i].frames; *c; c++)
			frames += *c == ';';
		/* frames deeper than any drawn are not laid out (a one-stack
		 * input of 10^8 frames costs no node for each); the one level past
		 * FLAME_DEPTH_MAX that is tells the picture to say so */
		if (frames + 1 > (size_t)path_capacity)
			path_capacity = frames + 1 > FLAME_DEPTH_MAX + 2 ? FLAME_DEPTH_MAX + 2 :
					(int)frames + 1;
	}
	qsort(stacks, now->stacks.count, sizeof(*stacks), flame_stack_compare);
	path = xcalloc(path_capacity, sizeof(*path));
	vec_push(&layout->nodes, root);
	for (int i = 0; i < now->stacks.count; i++)
		flame_add_stack(layout, &stacks[i], path, &path_length, path_capacity);
	for (int i = 0; i < layout->nodes.count; i++) {
		int64_t delta = layout->nodes.items[i].delta;

		if ((delta < 0 ? -delta : delta) > layout->max_delta)
			layout->max_delta = delta < 0 ? -delta : delta;
	}
	free(path);
	free(stacks);
}

static int flame_stack_compare(const void *a, const void *b)
{
	return folded_compare_frames(((const struct flame_stack *)a)->frames,
				     ((const struct flame_stack *)b)->frames);
}

/* ---- colours ---- */

struct flame_palette {
	const char *name;
	unsigned char low[3];     /* r, g, b at hash 0 */
	unsigned char high[3];    /* at the other end */
};

/* The single-hue palettes; hot is the default. The language palettes pick
 * one of these by what kind of frame it is (see flame_palette_for). */
static const struct flame_palette flame_palettes[] = {
	{ "hot", { 205, 0, 0 }, { 255, 230, 55 } },
	{ "mem", { 0, 190, 0 }, { 55, 240, 110 } },
	{ "io", { 80, 80, 190 }, { 140, 140, 245 } },
	{ "red", { 200, 50, 50 }, { 255, 130, 130 } },
	{ "green", { 50, 200, 50 }, { 110, 255, 110 } },
	{ "blue", { 80, 80, 205 }, { 135, 135, 255 } },
	{ "yellow", { 175, 175, 50 }, { 230, 230, 110 } },
	{ "purple", { 190, 80, 190 }, { 255, 140, 255 } },
	{ "aqua", { 50, 165, 165 }, { 110, 220, 220 } },
	{ "orange", { 190, 90, 0 }, { 255, 155, 55 } },
};

static const char *const flame_language_palettes[] = { "java", "js", "perl" };

static const struct flame_palette *flame_find_palette(const char *name)
{
	for (size_t i = 0; i < sizeof(flame_palettes) / sizeof(flame_palettes[0]); i++) {
		if (strcmp(flame_palettes[i].name, name) == 0)
			return &flame_palettes[i];
	}
	return NULL;
}

static bool flame_contains(const char *name, size_t length, const char *part)
{
	return memmem(name, length, part, strlen(part)) != NULL;
}

/* The language palettes colour by kind: kernel frames (annotated "_[k]")
 * orange, C++ yellow, the language's own frames green, native code red. */
static const struct flame_palette *flame_palette_for(const char *colors, const char *name,
						     size_t length)
{
	bool language;

	if (flame_find_palette(colors))
		return flame_find_palette(colors);
	if (flame_contains(name, length, "_[k]"))
		return flame_find_palette("orange");
	if (strcmp(colors, "java") == 0)
		language = flame_contains(name, length, "/") || flame_contains(name, length, "_[j]") ||
			   (flame_contains(name, length, ".") && !flame_contains(name, length, "::"));
	else if (strcmp(colors, "js") == 0)
		language = flame_contains(name, length, ".js") || flame_contains(name, length, "_[j]") ||
			   flame_contains(name, length, "JS:") || flame_contains(name, length, "LazyCompile");
	else
		language = flame_contains(name, length, ".pl") || flame_contains(name, length, ".pm") ||
			   flame_contains(name, length, "Perl");
	if (language)
		return flame_find_palette("green");
	if (flame_contains(name, length, "::"))
		return flame_find_palette("yellow");
	return flame_find_palette("red");
}

static bool flame_known_colors(const char *colors)
{
	if (flame_find_palette(colors))
		return true;
	for (size_t i = 0; i < sizeof(flame_language_palettes) / sizeof(flame_language_palettes[0]); i++) {
		if (strcmp(flame_language_palettes[i], colors) == 0)
			return true;
	}
	return false;
}

/* Three numbers in [0, 1) from the name, so the same name always gets the
 * same colour; the hash is of the name without a module prefix ("a`b")
 * so that a function keeps its colour whichever library reports it. */
static void flame_name_shades(const char *name, size_t length, double shade[3])
{
	const char *tick = memchr(name, '`', length);
	uint32_t hash = 2166136261u;

	if (tick) {
		length -= (size_t)(tick + 1 - name);
		name = tick + 1;
	}
	for (int k = 0; k < 3; k++) {
		for (size_t i = 0; i < length; i++)
			hash = (hash ^ (unsigned char)name[i]) * 16777619u;
		hash ^= hash >> 15;
		shade[k] = (double)(hash % 1000) / 1000.0;
	}
}

static void flame_color(const struct flame_node *node, const struct flame_layout *layout,
			const char *colors, bool differential, int rgb[3])
{
	const struct flame_palette *palette;
	double shade[3];

	if (differential) {
		double change = layout->max_delta ? (double)node->delta / (double)layout->max_delta : 0;
		int fade = (int)(210 * (1 - (change < 0 ? -change : change)));

		/* white for no change, deepening to red (grew) or blue (shrank) */
		rgb[0] = change < 0 ? fade : 255;
		rgb[1] = node->delta ? fade : 255;
		rgb[2] = change > 0 ? fade : 255;
		if (!node->delta)
			rgb[0] = rgb[1] = rgb[2] = 250;
		return;
	}
	palette = flame_palette_for(colors, node->name, node->name_length);
	flame_name_shades(node->name, node->name_length, shade);
	for (int k = 0; k < 3; k++)
		rgb[k] = palette->low[k] + (int)((palette->high[k] - palette->low[k]) * shade[k]);
}

/* ---- the SVG ---- */

static const char flame_style[] =
	"text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
	"#title { text-anchor: middle; font-size: 17px; }\n"
	"#subtitle { text-anchor: middle; fill: rgb(160,160,160); }\n"
	"#search, #reset-zoom { cursor: pointer; }\n"
	"#reset-zoom { opacity: 0; }\n"
	"#matched { text-anchor: end; }\n"
	"g.frame { cursor: pointer; }\n"
	"g.frame:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
	"g.frame text { pointer-events: none; }\n"
	"g.parent { opacity: 0.5; }\n";

/* count_name is already escaped */
static void flame_frame_title(struct strbuf *out, const struct flame_node *node,
			      const struct flame_layout *layout, const char *count_name,
			      bool differential)
{
	svg_escape(out, node->name, node->name_length);
	strbuf_printf(out, " (%llu %s, %.2f%%", (unsigned long long)node->samples, count_name,
		      layout->total ? 100.0 * (double)node->samples / (double)layout->total : 0.0);
	if (differential)
		strbuf_printf(out, ", %+lld", (long long)node->delta);
	strbuf_puts(out, ")");
}

static void flame_write_frame(struct strbuf *out, const struct flame_node *node,
			      const struct flame_layout *layout,
			      const struct flamegraph_options *options, const char *count_name,
			      bool differential, double scale, int y)
{
	double x = FLAME_PAD + (double)node->start * scale;
	double width = (double)node->samples * scale;
	int rgb[3];

	flame_color(node, layout, options->colors ? options->colors : "hot", differential, rgb);
	strbuf_puts(out, "<g class=\"frame\" data-name=\"");
	svg_escape(out, node->name, node->name_length);
	strbuf_printf(out, "\" data-start=\"%llu\" data-samples=\"%llu\" data-depth=\"%d\"",
		      (unsigned long long)node->start, (unsigned long long)node->samples, node->depth);
	if (differential)
		strbuf_printf(out, " data-delta=\"%lld\"", (long long)node->delta);
	strbuf_puts(out, "><title>");
	flame_frame_title(out, node, layout, count_name, differential);
	strbuf_printf(out, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		      "fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>",
		      x, y, width, FLAME_FRAME_HEIGHT - 1, rgb[0], rgb[1], rgb[2]);
	/* the label is set by the script, which knows the width at each zoom;
	 * the name is also here so the picture reads without scripts */
	strbuf_printf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3,
		      y + FLAME_FRAME_HEIGHT - 4.5);
	if ((width - 6) / (FLAME_FONT_SIZE * FLAME_FONT_WIDTH) >= node->name_length)
		svg_escape(out, node->name, node->name_length);
	strbuf_puts(out, "</text></g>\n");
}

int flamegraph_check_options(const struct flamegraph_options *options, char **error)
{
	if (options->width && (options->width < FLAMEGRAPH_WIDTH_MIN ||
			       options->width > FLAMEGRAPH_WIDTH_MAX)) {
		*error = xasprintf("--width %d is out of range (%d to %d pixels)", options->width,
				   FLAMEGRAPH_WIDTH_MIN, FLAMEGRAPH_WIDTH_MAX);
		return -EINVAL;
	}
	/* NaN passes every comparison but this one */
	if (!(options->min_width >= 0 && options->min_width <= FLAMEGRAPH_WIDTH_MAX)) {
		*error = xasprintf("--minwidth %g is out of range (0 to %d pixels)", options->min_width,
				   FLAMEGRAPH_WIDTH_MAX);
		return -EINVAL;
	}
	if (options->colors && !flame_known_colors(options->colors)) {
		*error = xasprintf("--colors '%s' is not a palette (hot, mem, io, java, js, perl, "
				   "red, green, blue, aqua, yellow, purple, orange)", options->colors);
		return -EINVAL;
	}
	return 0;
}

int flamegraph_svg(const struct folded_set *set, const struct folded_set *before,
		   const struct flamegraph_options *options, struct strbuf *out, char **error)
{
	struct folded_set now = { 0 }, then = { 0 };
	struct flame_layout layout = { 0 };
	int width = options->width ? options->width : 1200;
	double min_width = options->min_width || options->min_width_set ? options->min_width : 0.1;
	const char *title = options->title;
	struct strbuf count_name;
	char *attributes;
	bool differential = before != NULL, too_deep = false;
	double scale, graph_width = width - 2 * FLAME_PAD;
	int max_depth = 0, height, status;

	status = flamegraph_check_options(options, error);
	if (status)
		return status;
	if (set->overflow || (before && before->overflow)) {
		*error = xasprintf("the sample counts add up to more than %llu (2^63-1)",
				   (unsigned long long)FOLDED_TOTAL_MAX);
		return -EOVERFLOW;
	}
	/* the stacks as given need no copy; reversed or beside a second
	 * profile they are gathered anew */
	if (differential || options->reverse) {
		flame_gather(set, before, options->reverse, &now, &then);
		flame_lay_out(&now, differential ? &then : NULL, &layout);
	} else {
		flame_lay_out(set, NULL, &layout);
	}
	scale = layout.total ? graph_width / (double)layout.total : 0;
	for (int i = 0; i < layout.nodes.count; i++) {
		if ((double)layout.nodes.items[i].samples * scale >= min_width &&
		    layout.nodes.items[i].depth > max_depth)
			max_depth = layout.nodes.items[i].depth;
	}
	if (max_depth > FLAME_DEPTH_MAX) {
		max_depth = FLAME_DEPTH_MAX;
		too_deep = true;
	}
	height = (max_depth + 1) * FLAME_FRAME_HEIGHT + FLAME_TOP + FLAME_BOTTOM +
		 (options->subtitle ? FLAME_FONT_SIZE : 0);
	if (!title)
		title = differential ? "Differential Flame Graph" :
			options->inverted ? "Icicle Graph" : "Flame Graph";

	attributes = xasprintf("id=\"flamegraph\" data-total=\"%llu\" data-pad=\"%d\" "
			       "data-graph-width=\"%.2f\" data-font-width=\"%.3f\"",
			       (unsigned long long)layout.total, FLAME_PAD, graph_width,
			       FLAME_FONT_SIZE * FLAME_FONT_WIDTH);
	svg_begin(out, width, height, attributes, flame_style);
	free(attributes);
	strbuf_printf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n",
		      width, height, differential ? "rgb(250,250,250)" : "rgb(248,248,232)");
	strbuf_printf(out, "<text id=\"title\" x=\"%d\" y=\"24\">", width / 2);
	svg_escape_string(out, title);
	strbuf_puts(out, "</text>\n");
	if (options->subtitle) {
		strbuf_printf(out, "<text id=\"subtitle\" x=\"%d\" y=\"%d\">", width / 2, 24 + FLAME_FONT_SIZE + 4);
		svg_escape_string(out, options->subtitle);
		strbuf_puts(out, "</text>\n");
	}
	strbuf_printf(out, "<text id=\"reset-zoom\" x=\"%d\" y=\"24\">Reset Zoom</text>\n", FLAME_PAD);
	strbuf_printf(out, "<text id=\"search\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n",
		      width - FLAME_PAD);
	strbuf_printf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", FLAME_PAD,
		      height - FLAME_FONT_SIZE + 2);
	strbuf_printf(out, "<text id=\"matched\" x=\"%d\" y=\"%d\"></text>\n", width - FLAME_PAD,
		      height - FLAME_FONT_SIZE + 2);
	if (!layout.total)
		strbuf_printf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">No samples</text>\n",
			      width / 2, FLAME_TOP + 2 * FLAME_FRAME_HEIGHT);
	if (too_deep)
		strbuf_printf(out, "<text id=\"note\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
			      "Frames deeper than %d are left out</text>\n", width / 2, height - 4,
			      FLAME_DEPTH_MAX);
	strbuf_init(&count_name);
	svg_escape_string(&count_name, options->count_name ? options->count_name : "samples");
	strbuf_puts(out, "<g id=\"frames\">\n");
	for (int i = 0; layout.total && i < layout.nodes.count; i++) {
		const struct flame_node *node = &layout.nodes.items[i];
		int top = FLAME_TOP + (options->subtitle ? FLAME_FONT_SIZE : 0);
		int y = options->inverted ? top + node->depth * FLAME_FRAME_HEIGHT :
			top + (max_depth - node->depth) * FLAME_FRAME_HEIGHT;

		if ((double)node->samples * scale < min_width || node->depth > max_depth)
			continue;
		flame_write_frame(out, node, &layout, options, count_name.data, differential, scale, y);
	}
	strbuf_free(&count_name);
	strbuf_puts(out, "</g>\n");
	svg_script(out, flamegraph_script);
	svg_end(out);
	free(layout.nodes.items);
	folded_free(&now);
	folded_free(&then);
	return 0;
}
