/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for src/render/: reading folded stacks in their three input forms,
 * writing them back, the JSON reader, the flame graph SVG (escaping, the
 * frames and their widths, differential colours, options out of range) and
 * the heat map (both JSON shapes, empty intervals, the cells drawn). The
 * map outputs below are real ones, from sonde and bpftrace 0.17 printing
 * @[kstack, ustack, comm] in different key orders; the perf script sample
 * is from perf 6.1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/flamegraph.h"
#include "render/folded.h"
#include "render/heatmap.h"
#include "render/json.h"
#include "render/svg.h"

static int passed;
static int failed;

static void check(const char *name, bool ok, const char *detail)
{
	if (ok) {
		printf("PASS %s\n", name);
		passed++;
	} else {
		printf("FAIL %s: %s\n", name, detail ? detail : "");
		failed++;
	}
}

static void check_text(const char *name, const char *got, const char *expected)
{
	if (strcmp(got, expected) == 0) {
		check(name, true, NULL);
		return;
	}
	printf("FAIL %s: output differs\n--- expected\n%s--- got\n%s---\n", name, expected, got);
	failed++;
}

/* Parses text and returns the folded lines (caller frees), or the error. */
static char *fold(const char *text)
{
	struct folded_set set = { 0 };
	struct strbuf out;
	char *error = NULL;

	strbuf_init(&out);
	if (folded_parse(&set, text, strlen(text), &error) != 0) {
		strbuf_printf(&out, "error: %s\n", error);
		free(error);
	} else {
		folded_write(&set, &out);
	}
	folded_free(&set);
	return strbuf_release(&out);
}

static void check_fold(const char *name, const char *input, const char *expected)
{
	char *got = fold(input);

	check_text(name, got, expected);
	free(got);
}

static void test_folded_lines(void)
{
	check_fold("folded: lines merged and sorted frame by frame",
		   "a;b;c 2\n"
		   "a;b! 1\n"
		   "\n"
		   "a;b;c 3\n"
		   "a;b 4\r\n",
		   "a;b 4\n"
		   "a;b;c 5\n"
		   "a;b! 1\n");
	check_fold("folded: frames with spaces, count is the last word",
		   "prog;foo(int, char const*) const;bar 7\n",
		   "prog;foo(int, char const*) const;bar 7\n");
	check_fold("folded: a line without a count names its line",
		   "a;b 1\nc;d\n",
		   "error: line 2 is not a folded stack ('frame;frame COUNT')\n");
	check_fold("folded: a count that is not a number",
		   "a;b 1x\n",
		   "error: line 1: the sample count '1x' is not a whole number\n");
}

static void test_folded_add(void)
{
	struct folded_set set = { 0 };
	struct strbuf out;
	char frames[32];

	strbuf_init(&out);
	/* enough stacks to grow the index several times */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 5000; i++) {
			snprintf(frames, sizeof(frames), "p;f%d", i);
			folded_add(&set, frames, 1);
		}
	}
	check("folded_add: the same stack twice is one entry",
	      set.stacks.count == 5000 && folded_find(&set, "p;f4999") >= 0 &&
	      set.stacks.items[folded_find(&set, "p;f4999")].count == 2 &&
	      folded_find(&set, "p;f5000") < 0, "counts not merged");
	folded_free(&set);
	strbuf_free(&out);
}

/* sonde's print of @[kstack, ustack, comm]: an empty kernel stack prints
 * nothing; the kernel stack is told by its frames. */
static const char sonde_map[] =
	"\n\n"
	"@[\n"
	"    pvm_irq_enable+25\n"
	"    handle_softirqs+113\n"
	"    asm_sysvec_apic_timer_interrupt+22\n"
	", \n"
	"    hot+22\n"
	"    top+9\n"
	"    main+9\n"
	", r_hot]: 1\n"
	"@[, \n"
	"    hot+26\n"
	"    top+9\n"
	"    main+9\n"
	", r_hot]: 6\n"
	"@[, \n"
	"    hot+12\n"
	"    0x7f0012345678\n"
	", r_hot]: 12\n"
	"@count: 5\n";

/* bpftrace 0.17's print of @[comm, ustack, kstack]: the kernel stack last,
 * a comm that is all hex digits. */
static const char bpftrace_map[] =
	"Attaching 2 probes...\n"
	"\n"
	"\n"
	"@[dd, \n"
	"    0x562c3afa8b7c\n"
	", ]: 1\n"
	"@[dd, \n"
	"    __libc_read+13\n"
	", \n"
	"    read_zero+8\n"
	"    vfs_read+187\n"
	"    do_syscall_64+113\n"
	"    entry_SYSCALL_64_after_hwframe+118\n"
	"]: 3\n";

static void test_folded_maps(void)
{
	check_fold("folded: sonde's @[kstack, ustack, comm]",
		   sonde_map,
		   "r_hot;[unknown];hot 12\n"
		   "r_hot;main;top;hot 6\n"
		   "r_hot;main;top;hot;asm_sysvec_apic_timer_interrupt;handle_softirqs;pvm_irq_enable 1\n");
	check_fold("folded: bpftrace's @[comm, ustack, kstack]",
		   bpftrace_map,
		   "dd;[unknown] 1\n"
		   "dd;__libc_read;entry_SYSCALL_64_after_hwframe;do_syscall_64;vfs_read;read_zero 3\n");
	check_fold("folded: two stacks saying nothing: the first is the kernel's",
		   "@[\n    k1+1\n, \n    u1+2\n    u2\n, x]: 2\n",
		   "x;u2;u1;k1 2\n");
	check_fold("folded: a user frame that looks like the kernel's does not make a kernel stack",
		   "@[\n    schedule+3\n    main+4\n    _start+5\n, \n    schedule+1\n"
		   "    do_syscall_64+2\n, x]: 1\n",
		   "x;_start;main;schedule;do_syscall_64;schedule 1\n");
	check_fold("folded: ustack(perf) frames with addresses and objects",
		   "@[\n\t55d2c70c014f hot+38 (/tmp/r_hot)\n\t55d2c70c0179 ns::f(int, char) const+9 (/tmp/r_hot)\n"
		   "\t7f11c6ce524a [unknown] (/usr/lib/libc.so.6)\n]: 3\n",
		   "[unknown];ns::f(int, char) const;hot 3\n");
	check_fold("folded: a map with one stack and no comm",
		   "@stacks[\n    leaf+4\n    root+0\n]: 9\n",
		   "root;leaf 9\n");
	check_fold("folded: an entry left open names its first line",
		   "@[\n    a+1\n    b+2\n",
		   "error: line 1: the map entry starting here has no closing ']: COUNT'\n");
}

static const char perf_script[] =
	"# ========\n"
	"# captured on: x\n"
	"r_hot 30679 14851.666669:   10101010 cpu-clock:ppp: \n"
	"\t            114c hot+0x23 (/tmp/r_hot)\n"
	"\t            1179 mid+0x9 (/tmp/r_hot)\n"
	"\t           2724a __libc_start_call_main+0x7a (/usr/lib/libc.so.6)\n"
	"\n"
	"Web Content 1234/1240 [001] 14851.676: 1 cycles: \n"
	"\tffffffff81000000 [unknown] ([kernel.kallsyms])\n"
	"\t            2000 ns::f(int, std::pair<int, int>)+0x10 (/usr/bin/x)\n"
	"\n"
	"r_hot 30679 14851.680776:   10101010 cpu-clock:ppp: \n"
	"\t            1145 hot+0x1c (/tmp/r_hot)\n"
	"\t            1179 mid+0x9 (/tmp/r_hot)\n"
	"\t           2724a __libc_start_call_main+0x7a (/usr/lib/libc.so.6)\n";

static void test_folded_perf(void)
{
	check_fold("folded: perf script samples",
		   perf_script,
		   "Web Content;ns::f(int, std::pair<int, int>);[unknown] 1\n"
		   "r_hot;__libc_start_call_main;mid;hot 2\n");
}

static void test_json(void)
{
	const char *text = "{\"a\": [1, -2.5e1, \"x\\u00e9\\n\\\"\"], \"b\": {\"c\": true, \"d\": null}, "
			   "\"big\": 18446744073709551, \"neg\": -9007199254740993}";
	char *error = NULL;
	struct json_value *value = json_parse(text, strlen(text), &error);
	const struct json_value *a = json_member(value, "a");
	int64_t big = 0, neg = 0;

	check("json: nested values",
	      value && a && a->count == 3 && a->items[1]->number == -25 &&
	      strcmp(a->items[2]->text, "x\xc3\xa9\n\"") == 0 &&
	      json_member(json_member(value, "b"), "c")->boolean &&
	      json_member(json_member(value, "b"), "d")->kind == JSON_NULL, error);
	check("json: integers past 2^53 stay exact",
	      json_member_int(value, "big", &big) && big == 18446744073709551ll &&
	      json_member_int(value, "neg", &neg) && neg == -9007199254740993ll, "rounded");
	json_free(value);

	value = json_parse("{\"a\": [1, 2}", 12, &error);
	check("json: a bad text names the column", !value && error &&
	      strcmp(error, "expected ']' at column 12") == 0, error);
	free(error);
	error = NULL;
	value = json_parse("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", 72, &error);
	check("json: nesting is limited", !value && error && strstr(error, "nested too deeply"), error);
	free(error);
}

/* Draws set (and before) with options; returns the SVG or the error. */
static char *draw(const struct folded_set *set, const struct folded_set *before,
		  const struct flamegraph_options *options)
{
	struct strbuf out;
	char *error = NULL;

	strbuf_init(&out);
	if (flamegraph_svg(set, before, options, &out, &error) != 0) {
		strbuf_reset(&out);
		strbuf_printf(&out, "error: %s", error);
		free(error);
	}
	return strbuf_release(&out);
}

/* The <rect ...> of the frame group whose data-name is name, or NULL. */
static const char *frame_rect(const char *svg, const char *name)
{
	char key[256];
	const char *group;

	snprintf(key, sizeof(key), "data-name=\"%s\"", name);
	group = strstr(svg, key);
	return group ? strstr(group, "<rect ") : NULL;
}

/* A numeric attribute of that rect, or -1. */
static double frame_attribute(const char *svg, const char *name, const char *attribute)
{
	const char *rect = frame_rect(svg, name), *value;
	char key[64];

	snprintf(key, sizeof(key), " %s=\"", attribute);
	value = rect ? strstr(rect, key) : NULL;
	return value ? atof(value + strlen(key)) : -1;
}

/* Whether the frame named name is filled with fill. */
static bool frame_filled(const char *svg, const char *name, const char *fill)
{
	const char *rect = frame_rect(svg, name), *found;
	char key[64];

	snprintf(key, sizeof(key), "fill=\"%s\"", fill);
	found = rect ? strstr(rect, key) : NULL;
	return found && found < strstr(rect, "/>");
}

static void test_flamegraph(void)
{
	struct flamegraph_options options = { .width = 1020 };
	struct folded_set set = { 0 }, before = { 0 };
	char *svg;

	folded_add(&set, "prog;main;hot", 90);
	folded_add(&set, "prog;main;cold", 10);
	folded_add(&set, "prog;vector<int>::push&pop'\"", 100);
	svg = draw(&set, NULL, &options);
	/* 1000 pixels between the pads for 200 samples: 5 pixels a sample */
	check("flamegraph: widths in proportion to samples",
	      frame_attribute(svg, "hot", "width") == 450 && frame_attribute(svg, "cold", "width") == 50 &&
	      frame_attribute(svg, "all", "width") == 1000 && frame_attribute(svg, "cold", "x") == 10 && frame_attribute(svg, "hot", "x") == 60,
	      "wrong widths");
	check("flamegraph: names escaped for XML",
	      strstr(svg, "data-name=\"vector&lt;int&gt;::push&amp;pop&apos;&quot;\"") &&
	      strstr(svg, "<title>vector&lt;int&gt;::push&amp;pop&apos;&quot; (100 samples, 50.00%)</title>") &&
	      !strstr(svg, "<int>"), "raw < or & in the SVG");
	check("flamegraph: title tells samples and share",
	      strstr(svg, "<title>hot (90 samples, 45.00%)</title>") != NULL, "no title");
	check("flamegraph: nothing fetched", !strstr(svg, "href") && !strstr(svg, "https:") &&
	      strstr(svg, "<script type=\"text/ecmascript\"><![CDATA[") != NULL, "external reference");
	check("flamegraph: the same name, the same colour",
	      strstr(svg, "fill=\"rgb(") != NULL, "no fill");
	free(svg);

	options.min_width = 60;
	svg = draw(&set, NULL, &options);
	check("flamegraph: frames under --minwidth left out",
	      !strstr(svg, "data-name=\"cold\"") && strstr(svg, "data-name=\"hot\""), "cold drawn");
	free(svg);

	options = (struct flamegraph_options){ .inverted = true };
	svg = draw(&set, NULL, &options);
	check("flamegraph: --inverted puts the root at the top and is an icicle graph",
	      frame_attribute(svg, "all", "y") < frame_attribute(svg, "hot", "y") &&
	      strstr(svg, ">Icicle Graph<"), "root not on top");
	free(svg);

	options = (struct flamegraph_options){ .reverse = true };
	svg = draw(&set, NULL, &options);
	check("flamegraph: --reverse merges from the leaves",
	      strstr(svg, "data-name=\"hot\" data-start=\"0\" data-samples=\"90\" data-depth=\"1\"") ||
	      strstr(svg, "data-name=\"hot\" data-start=\"10\" data-samples=\"90\" data-depth=\"1\""),
	      "hot not at depth 1");
	free(svg);

	/* differential: hot grew, cold shrank, main's total stayed */
	folded_add(&before, "prog;main;hot", 50);
	folded_add(&before, "prog;main;cold", 50);
	folded_add(&before, "prog;vector<int>::push&pop'\"", 100);
	options = (struct flamegraph_options){ 0 };
	svg = draw(&set, &before, &options);
	check("flamegraph: differential colours, red grew, blue shrank, unchanged pale",
	      strstr(svg, "data-name=\"hot\" data-start=\"10\" data-samples=\"90\" data-depth=\"3\" "
			  "data-delta=\"40\"") &&
	      frame_filled(svg, "hot", "rgb(255,0,0)") && frame_filled(svg, "cold", "rgb(0,0,255)") &&
	      frame_filled(svg, "main", "rgb(250,250,250)"), "colours");
	free(svg);

	struct { struct flamegraph_options options; const char *error; } bad[] = {
		{ { .width = 20 }, "error: --width 20 is out of range (100 to 100000 pixels)" },
		{ { .min_width = -1 }, "error: --minwidth -1 is out of range (0 to 100000 pixels)" },
		{ { .colors = "rainbow" }, "error: --colors 'rainbow' is not a palette (hot, mem, io, "
					   "java, js, perl, red, green, blue, aqua, yellow, purple, orange)" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		svg = draw(&set, NULL, &bad[i].options);
		check_text("flamegraph: bad option", svg, bad[i].error);
		free(svg);
	}
	folded_free(&set);
	svg = draw(&set, NULL, &(struct flamegraph_options){ 0 });
	check("flamegraph: no samples is a picture saying so",
	      strstr(svg, ">No samples<") && !strstr(svg, "class=\"frame\""), "frames drawn");
	free(svg);
	folded_free(&before);
}

static char *heat(const char *json, struct heatmap *map)
{
	struct strbuf out;
	char *error = NULL;

	strbuf_init(&out);
	memset(map, 0, sizeof(*map));
	if (heatmap_parse_json(map, json, strlen(json), &error) != 0 ||
	    heatmap_svg(map, &(struct heatmap_options){ 0 }, &out, &error) != 0) {
		strbuf_printf(&out, "error: %s", error);
		free(error);
	}
	return strbuf_release(&out);
}

static void test_heatmap(void)
{
	/* sonde -f json, time() then print(@) each interval; the second had no
	 * events and printed no histogram */
	static const char stream[] =
		"{\"type\": \"attached_probes\", \"data\": {\"probes\": 3}}\n"
		"{\"type\": \"time\", \"data\": \"11:08:03\\n\"}\n"
		"{\"type\": \"hist\", \"data\": {\"@\": [{\"min\": 64, \"max\": 127, \"count\": 100}, "
		"{\"min\": 128, \"max\": 255, \"count\": 0}, {\"min\": 256, \"max\": 511, \"count\": 2}]}}\n"
		"{\"type\": \"time\", \"data\": \"11:08:04\\n\"}\n"
		"{\"type\": \"time\", \"data\": \"11:08:05\\n\"}\n"
		"{\"type\": \"hist\", \"data\": {\"@\": [{\"min\": 4096, \"max\": 8191, \"count\": 300}]}}\n"
		"{\"type\": \"hist\", \"data\": {\"@other\": [{\"min\": 1, \"max\": 1, \"count\": 7}]}}\n"
		"\n";
	/* runqlat --json -T: a printf with the time, then the record */
	static const char tool[] =
		"{\"type\": \"printf\", \"data\": \"\\n10:55:56\\n\"}\n"
		"{\"unit\": \"msecs\", \"k0\": \"\", \"buckets\": [{\"low\": 0, \"high\": 1, \"count\": 239}, "
		"{\"low\": 2, \"high\": 3, \"count\": 14}]}\n";
	/* a keyed map sums its histograms; lhist has open-ended buckets */
	static const char keyed[] =
		"{\"type\": \"hist\", \"data\": {\"@\": {\"a\": [{\"max\": -1, \"count\": 1}, "
		"{\"min\": 0, \"max\": 9, \"count\": 2}], \"b\": [{\"min\": 0, \"max\": 9, \"count\": 3}, "
		"{\"min\": 100, \"count\": 4}]}}}\n";
	struct heatmap map;
	char *svg;

	svg = heat(stream, &map);
	check("heatmap: a column per interval, an empty one for the interval without events",
	      map.columns.count == 3 && map.columns.items[1].buckets.count == 0 &&
	      strcmp(map.columns.items[1].label, "11:08:04") == 0 &&
	      map.columns.items[2].buckets.items[0].low == 4096 &&
	      map.columns.items[2].buckets.items[0].high == 8192, "wrong columns");
	check("heatmap: only the first map is drawn", strcmp(map.source, "@") == 0 &&
	      !strstr(svg, ", 7</title>"), "@other drawn");
	check("heatmap: cells titled with interval, range and count",
	      strstr(svg, "<title>11:08:03, 64-127, 100</title>") &&
	      strstr(svg, "<title>11:08:05, 4096-8191, 300</title>") &&
	      strstr(svg, "<title>11:08:04, 64-127, 0</title>"), "titles");
	check("heatmap: the rows between buckets filled in",
	      strstr(svg, "<title>11:08:03, 1024-2047, 0</title>") != NULL, "gap");
	check("heatmap: empty cells white, the fullest darkest",
	      strstr(svg, "data-count=\"0\" x=") && strstr(svg, "fill=\"rgb(165,0,38)\"><title>11:08:05, 4096-8191"),
	      "colours");
	free(svg);
	heatmap_free(&map);

	svg = heat(tool, &map);
	check("heatmap: a tool's --json records, inclusive high bounds, the unit",
	      map.columns.count == 1 && strcmp(map.columns.items[0].label, "10:55:56") == 0 &&
	      map.columns.items[0].buckets.items[1].low == 2 &&
	      map.columns.items[0].buckets.items[1].high == 4 &&
	      strstr(svg, "<title>10:55:56, 2-3 msecs, 14</title>"), svg);
	free(svg);
	heatmap_free(&map);

	svg = heat(keyed, &map);
	check("heatmap: keyed histograms summed, open-ended buckets",
	      strstr(svg, "<title>1, 0-9, 5</title>") && strstr(svg, "<title>1, &lt; 0, 1</title>") &&
	      strstr(svg, "<title>1, &gt;= 100, 4</title>"), svg);
	free(svg);
	heatmap_free(&map);

	static const struct { const char *name, *input, *error; } bad[] = {
		{ "heatmap: a bucket without a count",
		  "{\"type\": \"time\", \"data\": \"x\"}\n{\"unit\": \"usecs\", \"buckets\": [{\"low\": 1}]}\n",
		  "error: line 2: a histogram bucket lacks its \"low\"/\"high\" range or its \"count\"" },
		{ "heatmap: a hist without data", "{\"type\": \"hist\"}\nnot json\n",
		  "error: line 1: a hist record without its map in \"data\"" },
		{ "heatmap: a line that is not JSON", "\nnot json\n",
		  "error: line 2 is not JSON: unexpected character at column 1" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		svg = heat(bad[i].input, &map);
		check_text(bad[i].name, svg, bad[i].error);
		free(svg);
		heatmap_free(&map);
	}
	svg = heat("", &map);
	check("heatmap: no input, no histograms", strstr(svg, ">No histograms<") != NULL, svg);
	free(svg);
	heatmap_free(&map);

	/* the runtime's side: columns and buckets added directly */
	struct strbuf out;
	char *error = NULL;

	memset(&map, 0, sizeof(map));
	strbuf_init(&out);
	heatmap_begin_column(&map, NULL);
	heatmap_add_bucket(&map, 1, 2, 3);
	heatmap_add_bucket(&map, 1, 2, 4);
	heatmap_begin_column(&map, "later");
	heatmap_add_bucket(&map, 2, 4, 5);
	check("heatmap: columns built by the runtime",
	      heatmap_svg(&map, &(struct heatmap_options){ .title = "a<b" }, &out, &error) == 0 &&
	      strstr(out.data, "<title>1, 1, 7</title>") && strstr(out.data, "<title>later, 2-3, 5</title>") &&
	      strstr(out.data, ">a&lt;b<"), out.data);
	strbuf_free(&out);
	heatmap_free(&map);
}

/* One escaper for every text entering a picture (issue 19: a byte that is
 * not UTF-8 made the SVG unreadable, --countname went in raw). */
static void test_svg_escape(void)
{
	static const struct { const char *name, *text; size_t length; const char *expected; } cases[] = {
		{ "markup", "<a href='x'>&\"", 14, "&lt;a href=&apos;x&apos;&gt;&amp;&quot;" },
		{ "UTF-8 kept", "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5", 14,
		  "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5" },
		{ "a byte that is not UTF-8", "a\xff" "b", 3, "a\\xff" "b" },
		{ "a truncated sequence", "a\xe2\x86", 3, "a\\xe2\\x86" },
		{ "an overlong slash", "\xc0\xaf", 2, "\\xc0\\xaf" },
		{ "an encoded surrogate", "\xed\xa0\x80", 3, "\\xed\\xa0\\x80" },
		{ "U+FFFE and U+FFFF", "\xef\xbf\xbe\xef\xbf\xbf", 6, "\\xef\\xbf\\xbe\\xef\\xbf\\xbf" },
		{ "C0, DEL and C1 controls, NUL", "\x01\t\n\x7f\xc2\x85\0z", 8,
		  "\\x01\\x09\\x0a\\x7f\\xc2\\x85\\x00z" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf out;
		char name[96];

		strbuf_init(&out);
		strbuf_puts(&out, "");
		svg_escape(&out, cases[i].text, cases[i].length);
		snprintf(name, sizeof(name), "svg_escape: %s", cases[i].name);
		check_text(name, out.data, cases[i].expected);
		strbuf_free(&out);
	}
}

int main(void)
{
	test_folded_lines();
	test_folded_add();
	test_folded_maps();
	test_folded_perf();
	test_json();
	test_flamegraph();
	test_heatmap();
	test_svg_escape();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
