/*
 * SVG writing shared by the flame graph and the heat map. The text goes
 * through svg_escape() everywhere it comes from a profile, since frame
 * names are arbitrary bytes; the script sits in a CDATA section so that it
 * can use < and && freely and still be well-formed XML.
 */
#include <string.h>

#include "svg.h"

void svg_escape(struct strbuf *out, const char *text, size_t length)
{
	for (size_t i = 0; i < length; i++) {
		unsigned char c = (unsigned char)text[i];

		switch (c) {
		case '&': strbuf_puts(out, "&amp;"); break;
		case '<': strbuf_puts(out, "&lt;"); break;
		case '>': strbuf_puts(out, "&gt;"); break;
		case '"': strbuf_puts(out, "&quot;"); break;
		case '\'': strbuf_puts(out, "&apos;"); break;
		default:
			if (c >= 0x20 || c == '\t')
				strbuf_putc(out, (char)c);
		}
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
