/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SVG writing shared by the flame graph and the heat map. Every text that
 * enters the picture (frame names, labels, units, the title, the count's
 * name) goes through svg_escape(), since all of them are arbitrary bytes
 * and a single one that is not UTF-8 makes the whole file unreadable.
 * The script sits in a CDATA section so that it can use < and && freely
 * and still be well-formed XML.
 */
#include <stdint.h>
#include <string.h>

#include "../common/utf8.h"
#include "svg.h"

void svg_escape(struct strbuf *out, const char *text, size_t length)
{
	const unsigned char *bytes = (const unsigned char *)text;

	for (size_t i = 0; i < length;) {
		unsigned char c = bytes[i];
		uint32_t point;
		size_t run = utf8_decode(bytes + i, length - i, &point);

		switch (c) {
		case '&': strbuf_puts(out, "&amp;"); break;
		case '<': strbuf_puts(out, "&lt;"); break;
		case '>': strbuf_puts(out, "&gt;"); break;
		case '"': strbuf_puts(out, "&quot;"); break;
		case '\'': strbuf_puts(out, "&apos;"); break;
		default:
			/* XML 1.0 has no place for C0 controls, U+FFFE and U+FFFF even
			 * escaped, and a parser stops at a byte that is not UTF-8;
			 * DEL and the C1 controls are legal but invisible */
			if (run == 0 || point < 0x20 || (point >= 0x7f && point < 0xa0) ||
			    point == 0xfffe || point == 0xffff) {
				for (size_t k = 0; k < (run ? run : 1); k++)
					strbuf_printf(out, "\\x%02x", bytes[i + k]);
			} else {
				strbuf_append(out, text + i, run);
			}
			i += run ? run : 1;
			continue;
		}
		i++;
	}
}

void svg_escape_string(struct strbuf *out, const char *text)
{
	svg_escape(out, text, strlen(text));
}

void svg_begin(struct strbuf *out, int width, int height, const char *attributes,
	       const char *style)
{
	strbuf_puts(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n");
	strbuf_printf(out, "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		      "xmlns=\"http://www.w3.org/2000/svg\" %s>\n", width, height, width, height, attributes);
	strbuf_printf(out, "<style type=\"text/css\">\n%s</style>\n", style);
}

void svg_script(struct strbuf *out, const char *script)
{
	strbuf_printf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", script);
}

void svg_end(struct strbuf *out)
{
	strbuf_puts(out, "</svg>\n");
}
