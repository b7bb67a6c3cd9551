/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for what `sonde heatmap` reads and draws: any bytes as
 * a JSON stream of histogram records go through heatmap_parse_json() (and
 * so the JSON reader) and then through the heat map, so that the reader,
 * the cost of rows and cells and the SVG's escaping are all fuzzed.
 * Findings: crashes, hangs, leaks, sanitizer reports, and an SVG that is
 * not UTF-8 or holds a character XML cannot (a picture no parser reads).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "render/heatmap.h"
#include "svg_wellformed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct heatmap map = { 0 };
	char *text = malloc(size + 1), *error = NULL;
	struct strbuf out;

	memcpy(text, data, size);
	text[size] = 0;
	strbuf_init(&out);
	if (heatmap_parse_json(&map, text, size, &error) == 0 &&
	    heatmap_svg(&map, &(struct heatmap_options){ .title = text }, &out, &error) == 0)
		svg_check_wellformed(&out);
	free(error);
	strbuf_free(&out);
	heatmap_free(&map);
	free(text);
	return 0;
}
