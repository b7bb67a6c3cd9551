/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for what `sonde flamegraph` reads and draws: any bytes
 * go through folded_parse() (folded lines, a map of stacks, perf script,
 * told apart by looking) and then through the flame graph, so that the
 * readers, the layout's cost and the SVG's escaping are all fuzzed. The
 * first byte picks options (reverse, inverted, a differential graph of the
 * input against its second half, minwidth 0, --folded's writer); the rest
 * is the input. Findings: crashes, hangs, leaks, sanitizer reports, and an
 * SVG that is not UTF-8 (a picture no parser reads).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "render/flamegraph.h"
#include "render/folded.h"
#include "svg_wellformed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct folded_set set = { 0 }, before = { 0 };
	struct flamegraph_options options = { .title = "fuzz", .count_name = "samples" };
	unsigned flags = size ? data[0] : 0;
	char *text, *error = NULL;
	struct strbuf out;
	bool diff = flags & 4;

	if (size)
		data++, size--;
	text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	options.reverse = flags & 1;
	options.inverted = flags & 2;
	options.min_width_set = flags & 8;
	/* the title and the count's name are text from the command line */
	if (flags & 16)
		options.title = options.count_name = text;
	strbuf_init(&out);
	if (folded_parse(&set, text, size, &error) == 0 &&
	    (!diff || folded_parse(&before, text + size / 2, size - size / 2, &error) == 0)) {
		if (flags & 32) {
			flamegraph_write_folded(&set, options.reverse, &out);
		} else if (flamegraph_svg(&set, diff ? &before : NULL, &options, &out, &error) == 0) {
			svg_check_wellformed(&out);
		}
	}
	free(error);
	strbuf_free(&out);
	folded_free(&set);
	folded_free(&before);
	free(text);
	return 0;
}
