/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Latency heat maps: a series of histograms, one a column, drawn as a grid
 * of cells coloured by count.
 *
 * The rows are the union of every column's buckets, sorted by range, so a
 * column that printed fewer buckets (histograms leave out empty ones at the
 * ends) still lines up. Colour is linear in the count with a floor, so one
 * event is still visible next to thousands.
 *
 * What is drawn is bounded by what was read: every cell of the grid while
 * there are at most 20,000 more than buckets read, else a cell
 * for each bucket a column printed on a white background (rows times
 * intervals must not multiply out), rows for the gaps
 * between ranges only up to HEAT_ROWS_MAX in all (a wider gap is one row,
 * and the picture says so), and labels thinned to what fits. Buckets are
 * summed by sorting, so reading and drawing cost n log n in the input.
 *
 * The JSON reader takes the two shapes sonde prints: bpftrace's hist record
 * (`{"type": "hist", "data": {"@name": [{"min", "max", "count"}...]}}`,
 * or an object of such arrays for a keyed map, summed into one column) and
 * the histogram tools' `--json` record (`{"unit", "buckets": [{"low",
 * "high", "count"}]}`). Both give inclusive ranges. A printf or time record
 * just before (a tool's -T timestamp, bpftrace's time()) labels the column;
 * such labels are also what shows an interval without events, which prints
 * no histogram at all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap.h"
#include "json.h"
#include "scripts.h"
#include "svg.h"

#define HEAT_LEFT 110
#define HEAT_RIGHT 130
#define HEAT_TOP 50
#define HEAT_BOTTOM 60
#define HEAT_GRAPH_HEIGHT_MAX 640
#define HEAT_ROW_HEIGHT 18
#define HEAT_LABELS_MAX 20
#define HEAT_ROWS_MAX 4096    /* gap rows stop here: wider gaps are one row each */
#define HEAT_COMPACT_MIN 64   /* a column's buckets are merged past this many */
#define HEAT_DENSE_CELLS 20000 /* every cell is drawn up to this many more than buckets read */

/* a + b, stopping at UINT64_MAX: a count that large is already a lie,
 * but it must not become a small one */
static uint64_t heat_add_counts(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int heat_compare_rows(const void *a, const void *b)
{
	const struct heatmap_bucket *left = a, *right = b;

	if (left->low != right->low)
		return left->low < right->low ? -1 : 1;
	if (left->high != right->high)
		return left->high < right->high ? -1 : 1;
	return 0;
}

/* Sorts buckets by range and sums those of the same range; the new count. */
static int heat_merge_buckets(struct heatmap_bucket *buckets, int count)
{
	int kept = 0;

	qsort(buckets, count, sizeof(*buckets), heat_compare_rows);
	for (int i = 0; i < count; i++) {
		if (kept && heat_compare_rows(&buckets[kept - 1], &buckets[i]) == 0)
			buckets[kept - 1].count = heat_add_counts(buckets[kept - 1].count,
								  buckets[i].count);
		else
			buckets[kept++] = buckets[i];
	}
	return kept;
}

void heatmap_begin_column(struct heatmap *map, const char *label)
{
	struct heatmap_column column = { .label = label ? xstrdup(label) : NULL };

	vec_push(&map->columns, column);
}

void heatmap_add_bucket(struct heatmap *map, int64_t low, int64_t high, uint64_t count)
{
	struct heatmap_bucket bucket = { .low = low, .high = high, .count = count };
	struct heatmap_column *column;

	if (!map->columns.count)
		heatmap_begin_column(map, NULL);
	column = &map->columns.items[map->columns.count - 1];
	/* a keyed map's histograms share their buckets: they are added up by
	 * merging once the column has doubled since it was last merged, which
	 * keeps a column as small as its ranges at n log n in all */
	vec_push(&column->buckets, bucket);
	if (column->buckets.count >= HEAT_COMPACT_MIN && column->buckets.count >= 2 * column->merged) {
		column->buckets.count = heat_merge_buckets(column->buckets.items, column->buckets.count);
		column->merged = column->buckets.count;
	}
}

void heatmap_free(struct heatmap *map)
{
	for (int i = 0; i < map->columns.count; i++) {
		free(map->columns.items[i].label);
		free(map->columns.items[i].buckets.items);
	}
	free(map->columns.items);
	free(map->unit);
	free(map->source);
	memset(map, 0, sizeof(*map));
}

/* ---- reading JSON ---- */

/* One bucket with inclusive bounds, either may be missing (lhist's "< min"
 * and ">= max" buckets). */
static int heat_read_bucket(struct heatmap *map, const struct json_value *bucket,
			    const char *low_key, const char *high_key, int line, char **error)
{
	int64_t low = INT64_MIN, high = INT64_MAX, count;
	bool has_low = json_member_int(bucket, low_key, &low);
	bool has_high = json_member_int(bucket, high_key, &high);

	if (!json_member_int(bucket, "count", &count) || count < 0 || (!has_low && !has_high)) {
		*error = xasprintf("line %d: a histogram bucket lacks its \"%s\"/\"%s\" range or "
				   "its \"count\"", line, low_key, high_key);
		return -EINVAL;
	}
	if (low > high) {
		*error = xasprintf("line %d: a histogram bucket's \"%s\" %lld is above its \"%s\" %lld",
				   line, low_key, (long long)low, high_key, (long long)high);
		return -EINVAL;
	}
	heatmap_add_bucket(map, low, has_high && high < INT64_MAX ? high + 1 : INT64_MAX,
			   (uint64_t)count);
	return 0;
}

static int heat_read_buckets(struct heatmap *map, const struct json_value *buckets,
			     const char *low_key, const char *high_key, int line, char **error)
{
	if (!buckets || buckets->kind != JSON_ARRAY) {
		*error = xasprintf("line %d: the histogram is not an array of buckets", line);
		return -EINVAL;
	}
	for (int i = 0; i < buckets->count; i++) {
		int status = heat_read_bucket(map, buckets->items[i], low_key, high_key, line, error);

		if (status)
			return status;
	}
	return 0;
}

/* {"type": "hist", "data": {"@name": [...] or {"key": [...], ...}}} */
static int heat_read_hist(struct heatmap *map, const struct json_value *data, char **label,
			  int line, char **error)
{
	const struct json_value *histogram;
	int status = 0;

	if (!data || data->kind != JSON_OBJECT || data->count < 1) {
		*error = xasprintf("line %d: a hist record without its map in \"data\"", line);
		return -EINVAL;
	}
	/* the first map seen is the one drawn; others in the stream are left */
	if (!map->source)
		map->source = xstrdup(data->keys[0]);
	histogram = json_member(data, map->source);
	if (!histogram)
		return 0;
	heatmap_begin_column(map, *label);
	free(*label);
	*label = NULL;
	if (histogram->kind != JSON_OBJECT)
		return heat_read_buckets(map, histogram, "min", "max", line, error);
	for (int i = 0; i < histogram->count && !status; i++)
		status = heat_read_buckets(map, histogram->items[i], "min", "max", line, error);
	return status;
}

/* A short one-line text is kept as the next column's label. Intervals
 * with no events print their time but no histogram (an empty map prints
 * nothing): a label still waiting when the next one comes is such an
 * interval, and gets an empty column. */
static void heat_take_label(struct heatmap *map, const struct json_value *data, char **label)
{
	const char *text;
	size_t length;

	if (!data || data->kind != JSON_STRING)
		return;
	text = data->text;
	length = strlen(text);
	while (length && strchr(" \n\t", *text)) {
		text++;
		length--;
	}
	while (length && strchr(" \n\t", text[length - 1]))
		length--;
	if (!length || length > 40 || memchr(text, '\n', length))
		return;
	if (*label)
		heatmap_begin_column(map, *label);
	free(*label);
	*label = xstrndup(text, length);
}

static int heat_read_record(struct heatmap *map, const struct json_value *record, char **label,
			    int line, char **error)
{
	const struct json_value *type = json_member(record, "type");
	const struct json_value *unit = json_member(record, "unit");

	if (record->kind != JSON_OBJECT) {
		*error = xasprintf("line %d is not a JSON object", line);
		return -EINVAL;
	}
	if (json_member(record, "buckets")) {
		if (!map->unit && unit && unit->kind == JSON_STRING)
			map->unit = xstrdup(unit->text);
		heatmap_begin_column(map, *label);
		free(*label);
		*label = NULL;
		return heat_read_buckets(map, json_member(record, "buckets"), "low", "high", line,
					 error);
	}
	if (!type || type->kind != JSON_STRING)
		return 0;
	if (strcmp(type->text, "hist") == 0)
		return heat_read_hist(map, json_member(record, "data"), label, line, error);
	if (strcmp(type->text, "printf") == 0 || strcmp(type->text, "time") == 0)
		heat_take_label(map, json_member(record, "data"), label);
	return 0;
}

int heatmap_parse_json(struct heatmap *map, const char *text, size_t length, char **error)
{
	char *label = NULL;
	size_t at = 0;
	int line = 0, status = 0;

	while (at < length && !status) {
		const char *start = text + at;
		const char *end = memchr(start, '\n', length - at);
		size_t line_length = end ? (size_t)(end - start) : length - at;
		struct json_value *record;
		char *why = NULL;

		at += line_length + 1;
		line++;
		if (strspn(start, " \t\r") >= line_length)
			continue;
		record = json_parse(start, line_length, &why);
		if (!record) {
			*error = xasprintf("line %d is not JSON: %s", line, why);
			free(why);
			status = -EINVAL;
			break;
		}
		status = heat_read_record(map, record, &label, line, error);
		json_free(record);
	}
	if (label && !status)
		heatmap_begin_column(map, label);
	free(label);
	return status;
}

/* ---- the SVG ---- */

/* How many buckets of row's pattern fill the gap from row->high up to
 * limit: doubling for a power-of-two bucket (hist), the same width
 * otherwise (lhist); 0 for an open-ended row ("< min", ">= max"), which has
 * none. The arithmetic is unsigned: ranges may span all of int64. */
static uint64_t heat_gap_buckets(const struct heatmap_bucket *row, int64_t limit)
{
	uint64_t width = (uint64_t)row->high - (uint64_t)row->low;
	uint64_t gap = (uint64_t)limit - (uint64_t)row->high;
	uint64_t count = 0;

	if (row->low == INT64_MIN || row->high == INT64_MAX || row->high <= row->low)
		return 0;
	if (row->low > 0 && row->low <= INT64_MAX / 2 && row->high == 2 * row->low) {
		for (int64_t high = row->high; high < limit; count++)
			high = high > INT64_MAX / 2 ? INT64_MAX : 2 * high;
		return count;
	}
	return gap / width + (gap % width != 0);
}

struct heat_rows {
	struct heatmap_bucket *items;
	int count;
	int capacity;
};

static void heat_push_row(struct heat_rows *rows, struct heatmap_bucket row)
{
	vec_push(rows, row);
}

/* The count buckets after row, in its pattern, the last one ending at limit. */
static void heat_fill_gap(struct heat_rows *rows, const struct heatmap_bucket *row, int64_t limit,
			  uint64_t count)
{
	bool doubling = row->low > 0 && row->high == 2 * row->low;
	uint64_t width = (uint64_t)row->high - (uint64_t)row->low;
	int64_t low = row->high;

	for (uint64_t i = 0; i < count; i++) {
		struct heatmap_bucket next = { .low = low };

		if (doubling)
			width = (uint64_t)low;
		next.high = (uint64_t)limit - (uint64_t)low > width ? (int64_t)((uint64_t)low + width) :
			    limit;
		heat_push_row(rows, next);
		low = next.high;
	}
}

/* Every distinct bucket range of all columns (columns are merged), low
 * first, with the gaps between them filled (a histogram prints only the
 * buckets it has, so a range no interval reached would otherwise vanish
 * from the axis) while the rows stay under HEAT_ROWS_MAX; past that a gap
 * is one row. *merged_gaps counts those. */
static struct heatmap_bucket *heat_rows(const struct heatmap_column *columns, int column_count,
					int *count, int *merged_gaps)
{
	struct heat_rows rows = { 0 };
	struct heatmap_bucket *all;
	int total = 0, distinct;

	*merged_gaps = 0;
	for (int i = 0; i < column_count; i++)
		total += columns[i].buckets.count;
	all = xcalloc(total + 1, sizeof(*all));
	for (int i = 0, k = 0; i < column_count; i++) {
		for (int j = 0; j < columns[i].buckets.count; j++)
			all[k++] = columns[i].buckets.items[j];
	}
	distinct = heat_merge_buckets(all, total);
	for (int i = 0; i < distinct; i++) {
		struct heatmap_bucket last = rows.count ? rows.items[rows.count - 1] : all[i];

		if (last.high < all[i].low) {
			/* rows still to come are reserved: the gaps get what is left */
			int64_t room = (int64_t)HEAT_ROWS_MAX - rows.count - (distinct - i);
			uint64_t gap = heat_gap_buckets(&last, all[i].low);

			/* after an open-ended row ("< min") there is no pattern to
			 * follow: the gap is one row, as its label says */
			if (gap && room > 0 && gap <= (uint64_t)room) {
				heat_fill_gap(&rows, &last, all[i].low, gap);
			} else {
				heat_push_row(&rows, (struct heatmap_bucket){ .low = last.high,
									      .high = all[i].low });
				*merged_gaps += gap > 1;
			}
		}
		all[i].count = 0;
		heat_push_row(&rows, all[i]);
	}
	free(all);
	*count = rows.count;
	return rows.items;
}

/* The row of bucket (which is one of rows, sorted): a binary search. */
static int heat_find_row(const struct heatmap_bucket *rows, int count,
			 const struct heatmap_bucket *bucket)
{
	int low = 0, high = count - 1;

	while (low < high) {
		int middle = low + (high - low) / 2;

		if (heat_compare_rows(&rows[middle], bucket) < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return low;
}

static void heat_range(struct strbuf *out, const struct heatmap_bucket *row)
{
	if (row->low == INT64_MIN)
		strbuf_printf(out, "&lt; %lld", (long long)row->high);
	else if (row->high == INT64_MAX)
		strbuf_printf(out, "&gt;= %lld", (long long)row->low);
	else if (row->high == row->low + 1)
		strbuf_printf(out, "%lld", (long long)row->low);
	else
		strbuf_printf(out, "%lld-%lld", (long long)row->low, (long long)row->high - 1);
}

static void heat_column_label(struct strbuf *out, const struct heatmap *map, int column)
{
	if (map->columns.items[column].label)
		svg_escape_string(out, map->columns.items[column].label);
	else
		strbuf_printf(out, "%d", column + 1);
}

/* White for nothing; then from pale yellow (few) to dark red (the most). */
static void heat_color(uint64_t count, uint64_t max, int rgb[3])
{
	static const int few[3] = { 255, 236, 160 }, most[3] = { 165, 0, 38 };
	double share = max ? (double)count / (double)max : 0;

	for (int k = 0; k < 3; k++)
		rgb[k] = count ? few[k] + (int)((most[k] - few[k]) * share) : 255;
}

/* Each column's buckets sorted and summed by range (a copy: the map is
 * the caller's). */
static struct heatmap_column *heat_merged_columns(const struct heatmap *map)
{
	struct heatmap_column *columns = xcalloc(map->columns.count + 1, sizeof(*columns));

	for (int i = 0; i < map->columns.count; i++) {
		const struct heatmap_column *column = &map->columns.items[i];
		struct heatmap_bucket *buckets = xcalloc(column->buckets.count + 1, sizeof(*buckets));

		if (column->buckets.count)
			memcpy(buckets, column->buckets.items, sizeof(*buckets) * column->buckets.count);
		columns[i].label = column->label;
		columns[i].buckets.items = buckets;
		columns[i].buckets.count = heat_merge_buckets(buckets, column->buckets.count);
	}
	return columns;
}

static const char heat_style[] =
	"text { font-family: Verdana, sans-serif; font-size: 11px; fill: rgb(0,0,0); }\n"
	"#title { text-anchor: middle; font-size: 17px; }\n"
	".x-label { text-anchor: middle; }\n"
	".y-label { text-anchor: end; }\n"
	"rect.cell:hover { stroke: rgb(0,0,0); stroke-width: 1; }\n";

static void heat_legend(struct strbuf *out, int x, int y, uint64_t max)
{
	strbuf_printf(out, "<text x=\"%d\" y=\"%d\">count</text>\n", x, y - 6);
	for (int i = 0; i <= 4; i++) {
		/* max * i / 4 rounded up, without the product wrapping */
		uint64_t count = i == 0 ? 0 : i == 4 ? max :
				 max / 4 * (uint64_t)i + (max % 4 * (uint64_t)i + 3) / 4;
		int rgb[3];

		if (i > 0 && count == 0)
			count = 1;
		heat_color(count, max, rgb);
		strbuf_printf(out, "<rect class=\"legend\" x=\"%d\" y=\"%d\" width=\"16\" height=\"16\" "
			      "fill=\"rgb(%d,%d,%d)\" stroke=\"rgb(160,160,160)\"/>"
			      "<text x=\"%d\" y=\"%d\">%llu</text>\n", x, y + i * 20, rgb[0], rgb[1],
			      rgb[2], x + 22, y + i * 20 + 12, (unsigned long long)count);
	}
}

int heatmap_svg(const struct heatmap *map, const struct heatmap_options *options,
		struct strbuf *out, char **error)
{
	int width = options->width ? options->width : 1200;
	const char *title = options->title ? options->title : "Latency Heat Map";
	int row_count, columns = map->columns.count, height, graph_height, step, merged_gaps;
	struct heatmap_column *merged;
	double cell_width, cell_height;
	struct heatmap_bucket *rows;
	uint64_t max = 0, buckets_read = 0;
	bool dense;

	if (width < HEATMAP_WIDTH_MIN || width > HEATMAP_WIDTH_MAX) {
		*error = xasprintf("--width %d is out of range (%d to %d pixels)", width,
				   HEATMAP_WIDTH_MIN, HEATMAP_WIDTH_MAX);
		return -EINVAL;
	}
	merged = heat_merged_columns(map);
	rows = heat_rows(merged, columns, &row_count, &merged_gaps);
	for (int i = 0; i < columns; i++) {
		buckets_read += (uint64_t)merged[i].buckets.count;
		for (int j = 0; j < merged[i].buckets.count; j++) {
			if (merged[i].buckets.items[j].count > max)
				max = merged[i].buckets.items[j].count;
		}
	}
	cell_height = row_count ? HEAT_ROW_HEIGHT : 0;
	if (row_count * cell_height > HEAT_GRAPH_HEIGHT_MAX)
		cell_height = (double)HEAT_GRAPH_HEIGHT_MAX / row_count;
	graph_height = row_count ? (int)(row_count * cell_height + 0.5) : 100;
	height = HEAT_TOP + graph_height + HEAT_BOTTOM;
	if (height < HEAT_TOP + 120 + HEAT_BOTTOM)
		height = HEAT_TOP + 120 + HEAT_BOTTOM;
	cell_width = columns ? (double)(width - HEAT_LEFT - HEAT_RIGHT) / columns : 0;

	svg_begin(out, width, height, "id=\"heatmap\"", heat_style);
	strbuf_printf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"rgb(255,255,255)\"/>\n",
		      width, height);
	strbuf_printf(out, "<text id=\"title\" x=\"%d\" y=\"24\">", width / 2);
	svg_escape_string(out, title);
	strbuf_puts(out, "</text>\n");
	strbuf_printf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", HEAT_LEFT, height - 8);
	if (!columns || !row_count)
		strbuf_printf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">No histograms</text>\n",
			      width / 2, HEAT_TOP + 40);
	if (merged_gaps)
		strbuf_printf(out, "<text id=\"note\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%d empty "
			      "range%s drawn as one row each (past %d rows)</text>\n",
			      width - HEAT_RIGHT, height - 8, merged_gaps, merged_gaps == 1 ? "" : "s",
			      HEAT_ROWS_MAX);
	/* cells, the lowest bucket at the bottom: every row of every column
	 * (an empty cell still names its interval and range on hover) while
	 * that is at most 20,000 more than what was read; past that, the buckets
	 * each column printed, on the white background */
	dense = (uint64_t)row_count * (uint64_t)columns <= buckets_read + HEAT_DENSE_CELLS;
	strbuf_puts(out, "<g id=\"cells\">\n");
	for (int i = 0; i < columns; i++) {
		const struct heatmap_column *column = &merged[i];

		for (int k = 0, j = 0; dense ? j < row_count : k < column->buckets.count; j++) {
			uint64_t count = 0;
			double y;
			int rgb[3];

			if (!dense)
				j = heat_find_row(rows, row_count, &column->buckets.items[k]);
			if (k < column->buckets.count &&
			    heat_compare_rows(&column->buckets.items[k], &rows[j]) == 0)
				count = column->buckets.items[k++].count;
			y = HEAT_TOP + graph_height - (j + 1) * cell_height;

			heat_color(count, max, rgb);
			strbuf_printf(out, "<rect class=\"cell\" data-column=\"%d\" data-row=\"%d\" "
				      "data-count=\"%llu\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
				      "fill=\"rgb(%d,%d,%d)\"><title>", i, j, (unsigned long long)count,
				      HEAT_LEFT + i * cell_width, y, cell_width, cell_height,
				      rgb[0], rgb[1], rgb[2]);
			heat_column_label(out, map, i);
			strbuf_puts(out, ", ");
			heat_range(out, &rows[j]);
			if (map->unit) {
				strbuf_putc(out, ' ');
				svg_escape_string(out, map->unit);
			}
			strbuf_printf(out, ", %llu</title></rect>\n", (unsigned long long)count);
		}
		free(merged[i].buckets.items);
	}
	free(merged);
	strbuf_puts(out, "</g>\n");
	/* axes: the frame, bucket labels (thinned out when rows are thin), interval labels */
	strbuf_printf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		      "stroke=\"rgb(120,120,120)\"/>\n", HEAT_LEFT, HEAT_TOP,
		      width - HEAT_LEFT - HEAT_RIGHT, graph_height);
	/* compared as doubles first: a thin enough row makes the quotient
	 * larger than an int holds */
	step = cell_height >= 12 || !row_count ? 1 : 12 / cell_height >= row_count ? row_count :
	       (int)(12 / cell_height) + 1;
	for (int j = 0; j < row_count; j += step) {
		strbuf_printf(out, "<text class=\"y-label\" x=\"%d\" y=\"%.1f\">", HEAT_LEFT - 6,
			      HEAT_TOP + graph_height - j * cell_height - cell_height / 2 + 4);
		heat_range(out, &rows[j]);
		strbuf_puts(out, "</text>\n");
	}
	step = columns > HEAT_LABELS_MAX ? (columns + HEAT_LABELS_MAX - 1) / HEAT_LABELS_MAX : 1;
	for (int i = 0; i < columns; i += step) {
		strbuf_printf(out, "<text class=\"x-label\" x=\"%.1f\" y=\"%d\">",
			      HEAT_LEFT + (i + 0.5) * cell_width, HEAT_TOP + graph_height + 16);
		heat_column_label(out, map, i);
		strbuf_puts(out, "</text>\n");
	}
	strbuf_printf(out, "<text class=\"x-label\" x=\"%d\" y=\"%d\">time (interval)</text>\n",
		      HEAT_LEFT + (width - HEAT_LEFT - HEAT_RIGHT) / 2, HEAT_TOP + graph_height + 34);
	strbuf_printf(out, "<text class=\"y-label\" x=\"%d\" y=\"%d\">", HEAT_LEFT - 6, HEAT_TOP - 10);
	if (map->unit)
		svg_escape_string(out, map->unit);
	else
		strbuf_puts(out, "value");
	strbuf_puts(out, "</text>\n");
	heat_legend(out, width - HEAT_RIGHT + 20, HEAT_TOP + 10, max);
	svg_script(out, heatmap_script);
	svg_end(out);
	free(rows);
	return 0;
}
