/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UTF-8 validation, shared by the writers of text that must be valid
 * UTF-8 whatever bytes a kernel string or a profile holds: the Prometheus
 * exposition (src/serve) and the SVG pictures (src/render). Each writes the
 * bytes this rejects as the text \xNN.
 */
#ifndef SONDE_UTF8_H
#define SONDE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at text (at most left bytes, left > 0)
 * with its code point in *point, or 0 for a byte that starts none: a stray
 * continuation byte, a truncated sequence, an overlong form, a surrogate,
 * past U+10FFFF. */
size_t utf8_decode(const unsigned char *text, size_t left, uint32_t *point);

#endif
