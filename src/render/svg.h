/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the flame graph and the heat map share about writing SVG: escaping
 * text for XML (C++ names hold <, > and &), the document's opening, and the
 * script wrapper. Both pictures are one self-contained file: inline style
 * and script, nothing fetched (the xmlns is a name, never loaded).
 */
#ifndef SONDE_SVG_H
#define SONDE_SVG_H

#include <stddef.h>

#include "../common/util.h"

/* Appends text with &, <, >, " and ' escaped; bytes that are not UTF-8,
 * control characters and the code points XML 1.0 cannot hold even escaped
 * (U+FFFE, U+FFFF) become the visible text \xNN, one per byte, so that
 * any bytes make a well-formed picture. */
void svg_escape(struct strbuf *out, const char *text, size_t length);
void svg_escape_string(struct strbuf *out, const char *text);
/* The XML declaration and the <svg> element's opening tag (with the extra
 * attributes given), then the style sheet. */
void svg_begin(struct strbuf *out, int width, int height, const char *attributes,
	       const char *style);
/* A <script> element holding script (which must not contain "]]>"). */
void svg_script(struct strbuf *out, const char *script);
void svg_end(struct strbuf *out);

#endif
