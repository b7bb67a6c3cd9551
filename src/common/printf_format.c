/* SPDX-License-Identifier: Apache-2.0 */
/*
 * printf-style format strings.
 *
 * format_parse() splits a format into pieces: runs of literal text (with
 * "%%" already turned into '%') and conversions, each kept as its full text
 * ("%-08lld") so the runtime can hand it back to the C library when it
 * renders an event. The grammar of one conversion is C's, minus the parts a
 * BPF program cannot supply ('*' widths, floating point, %n):
 *
 *     '%' flags* width? ('.' digits*)? length? conversion
 *     flags      = '-' | '+' | ' ' | '#' | '0'
 *     length     = hh | h | l | ll | z | j | t
 *     conversion = d | i | u | x | X | o | c | s | p | r
 *
 * Anything else after a '%' is an error rather than text printed as is:
 * bpftrace 0.17 passes unknown conversions straight to snprintf, which then
 * reads arguments that are not there.
 *
 * format_check_arg() says whether a value of some type can feed a
 * conversion: the integer conversions take integers and pointers, %s takes
 * strings, ntop() addresses, stacks, ksym()/usym() symbols and the integers
 * of syscall_name() and friends (printed as names), and bpftrace's
 * %r takes buf() buffers (and, unlike bpftrace, strings), printed with
 * non-printable bytes escaped.
 */
#include "common/printf_format.h"

#include <stdlib.h>
#include <string.h>

static bool format_is_flag(char c)
{
	return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0';
}

static bool format_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool format_is_conversion(char c)
{
	return c && strchr("diuxXocspr", c) != NULL;
}

/*
 * Skips the digits of a width or precision at format[*i], refusing values
 * above FORMAT_WIDTH_MAX (counted without overflow, however many digits).
 */
static int format_scan_number(const char *format, int *i, const char *what, char **error,
			      int *error_offset)
{
	int digits = *i;
	long value = 0;

	while (format_is_digit(format[*i])) {
		if (value <= FORMAT_WIDTH_MAX)
			value = value * 10 + (format[*i] - '0');
		(*i)++;
	}
	if (value <= FORMAT_WIDTH_MAX)
		return 0;
	*error = xasprintf("%s %.*s in a format is too large (at most %d)", what, *i - digits,
			   format + digits, FORMAT_WIDTH_MAX);
	*error_offset = digits;
	return -1;
}

/*
 * Reads the conversion that starts at format[start] (a '%'). Returns the
 * index just past it, or -1 with *error and *error_offset set.
 */
static int format_scan_conversion(const char *format, int start, char *conversion,
				  char **error, int *error_offset)
{
	int i = start + 1;

	while (format_is_flag(format[i]))
		i++;
	if (format_scan_number(format, &i, "width", error, error_offset) < 0)
		return -1;
	if (format[i] == '.') {
		i++;
		if (format_scan_number(format, &i, "precision", error, error_offset) < 0)
			return -1;
	}
	if (format[i] == '*' || (format[i] == '.' && format[i + 1] == '*')) {
		*error = xstrdup("'*' widths and precisions are not supported in formats");
		*error_offset = i;
		return -1;
	}

	int length_start = i;
	if (format[i] == 'h' || format[i] == 'l') {
		char twice = format[i];
		i++;
		if (format[i] == twice)
			i++;
	} else if (format[i] == 'z' || format[i] == 'j' || format[i] == 't') {
		i++;
	}
	bool has_length = i > length_start;

	char c = format[i];
	if (c == '\0') {
		*error = xstrdup("format ends in the middle of a conversion; write %% for a literal '%'");
		*error_offset = start;
		return -1;
	}
	if (!format_is_conversion(c)) {
		*error = xasprintf("invalid conversion '%.*s' in format (supported: d i u x X o c s p r, "
				   "and %%%% for '%%')", i - start + 1, format + start);
		*error_offset = start;
		return -1;
	}
	if (has_length && (c == 's' || c == 'c' || c == 'r')) {
		*error = xasprintf("length modifier '%.*s' cannot be used with %%%c", i - length_start,
				   format + length_start, c);
		*error_offset = start;
		return -1;
	}
	*conversion = c;
	/* bpftrace's %rx (every byte as \xNN) and %rh (every byte as NN, spaced) */
	if (c == 'r' && (format[i + 1] == 'x' || format[i + 1] == 'h'))
		i++;
	return i + 1;
}

int format_parse(const char *format, struct format_pieces *out, char **error, int *error_offset)
{
	VEC(struct format_piece) pieces = { 0 };
	struct strbuf literal;
	int literal_start = 0;
	int conversions = 0;
	int i = 0;

	*error = NULL;
	*error_offset = 0;
	strbuf_init(&literal);
	while (format[i]) {
		if (format[i] != '%') {
			if (literal.length == 0)
				literal_start = i;
			strbuf_putc(&literal, format[i++]);
			continue;
		}
		if (format[i + 1] == '%') {
			if (literal.length == 0)
				literal_start = i;
			strbuf_putc(&literal, '%');
			i += 2;
			continue;
		}

		char conversion = 0;
		int end = format_scan_conversion(format, i, &conversion, error, error_offset);
		if (end < 0) {
			strbuf_free(&literal);
			struct format_pieces partial = { pieces.items, pieces.count, conversions };
			format_pieces_free(&partial);
			memset(out, 0, sizeof(*out));
			return -1;
		}
		if (literal.length) {
			vec_push(&pieces, ((struct format_piece){
				.text = strbuf_release(&literal),
				.text_offset = literal_start,
			}));
		}
		vec_push(&pieces, ((struct format_piece){
			.is_conversion = true,
			.text = xstrndup(format + i, end - i),
			.conversion = conversion,
			.text_offset = i,
		}));
		conversions++;
		i = end;
	}
	if (literal.length) {
		vec_push(&pieces, ((struct format_piece){
			.text = strbuf_release(&literal),
			.text_offset = literal_start,
		}));
	}
	strbuf_free(&literal);

	out->items = pieces.items;
	out->count = pieces.count;
	out->conversion_count = conversions;
	return 0;
}

void format_pieces_free(struct format_pieces *pieces)
{
	for (int i = 0; i < pieces->count; i++)
		free(pieces->items[i].text);
	free(pieces->items);
	pieces->items = NULL;
	pieces->count = 0;
	pieces->conversion_count = 0;
}

/* The word bpftrace uses for a type in "(... supplied)". */
static const char *format_type_word(const struct type *type)
{
	if (type->kind == TYPE_POINTER)
		return "integer";
	if (type->kind == TYPE_INET)
		return "string";
	return type_kind_name(type->kind);
}

char *format_check_arg(const struct format_piece *conversion, const struct type *type)
{
	if (!type || type->kind == TYPE_NONE)
		return NULL;
	if (conversion->conversion == 's') {
		if (type->kind == TYPE_STRING || type->kind == TYPE_INET || type->kind == TYPE_STACK ||
		    type->kind == TYPE_SYMBOL ||
		    (type->kind == TYPE_INT && (type->int_names || type->enumeration)))
			return NULL;
		return xasprintf("%%s specifier expects a value of type string (%s supplied)",
				 format_type_word(type));
	}
	if (conversion->conversion == 'r') {
		if (type->kind == TYPE_BUFFER || type->kind == TYPE_STRING)
			return NULL;
		return xasprintf("%%r specifier expects a value of type buffer (%s supplied)",
				 format_type_word(type));
	}
	if (type_is_integer_like(type))
		return NULL;
	return xasprintf("%%%c specifier expects a value of type integer (%s supplied)",
			 conversion->conversion, format_type_word(type));
}
