/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UTF-8 decoding by RFC 3629: one to four bytes, the shortest form only,
 * no surrogates (U+D800-U+DFFF, which only UTF-16 may spell), nothing past
 * U+10FFFF.
 */
#include "utf8.h"

size_t utf8_decode(const unsigned char *text, size_t left, uint32_t *point)
{
	unsigned char c = text[0];
	size_t length;

	if (c < 0x80) {
		*point = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		length = 2;
		*point = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		length = 3;
		*point = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		length = 4;
		*point = c & 0x07;
	} else {
		return 0;
	}
	if (length > left)
		return 0;
	for (size_t i = 1; i < length; i++) {
		if ((text[i] & 0xc0) != 0x80)
			return 0;
		*point = *point << 6 | (text[i] & 0x3f);
	}
	/* overlong forms, surrogates, past U+10FFFF */
	if ((length == 3 && *point < 0x800) || (length == 4 && *point < 0x10000) ||
	    (*point >= 0xd800 && *point <= 0xdfff) || *point > 0x10ffff)
		return 0;
	return length;
}
