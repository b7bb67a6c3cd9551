/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the renderers' fuzzers require of every picture beyond not
 * crashing: valid UTF-8 without the characters XML 1.0 cannot hold (C0
 * controls but tab and newline, U+FFFE, U+FFFF), or no parser reads it.
 * A violation aborts, which libFuzzer reports as a crash.
 */
#ifndef SONDE_FUZZ_SVG_WELLFORMED_H
#define SONDE_FUZZ_SVG_WELLFORMED_H

#include <stdint.h>
#include <stdlib.h>

#include "common/utf8.h"
#include "common/util.h"

static inline void svg_check_wellformed(const struct strbuf *svg)
{
	const unsigned char *bytes = (const unsigned char *)svg->data;
	uint32_t point;

	for (size_t i = 0; i < svg->length;) {
		size_t run = utf8_decode(bytes + i, svg->length - i, &point);

		if (!run || (point < 0x20 && point != '\t' && point != '\n') ||
		    point == 0xfffe || point == 0xffff)
			abort();
		i += run;
	}
}

#endif
