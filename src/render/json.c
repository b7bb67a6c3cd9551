/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The JSON reader: a recursive-descent parser over one line of text, one
 * function a production of the grammar (RFC 8259). The tree it builds owns
 * all of its strings. Errors name the column (1-based) where the text
 * stopped making sense, which is enough for a user to find the fault in a
 * line that the caller has already named.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "json.h"

/* A tree costs about 100 bytes a value and "0," is a value in two bytes:
 * a line is refused past this many values, so that one hostile line cannot
 * cost 50 times its size (a 256 MiB line, 12 GB). A histogram record holds
 * four values a bucket (the object and its three numbers): this is 4,000
 * keys of 64 buckets. */
#define JSON_VALUES_MAX (1 << 20)

struct json_reader {
	const char *text;
	size_t length;
	size_t at;
	size_t values;      /* read so far */
	char *error;
};

static struct json_value *json_read_value(struct json_reader *reader, int depth);

static bool json_fail(struct json_reader *reader, const char *what)
{
	if (!reader->error)
		reader->error = xasprintf("%s at column %zu", what, reader->at + 1);
	return false;
}

static void json_skip_space(struct json_reader *reader)
{
	while (reader->at < reader->length && strchr(" \t\r\n", reader->text[reader->at]) &&
	       reader->text[reader->at])
		reader->at++;
}

static int json_peek(struct json_reader *reader)
{
	json_skip_space(reader);
	return reader->at < reader->length ? (unsigned char)reader->text[reader->at] : -1;
}

static bool json_expect(struct json_reader *reader, char c)
{
	if (json_peek(reader) != c) {
		char what[32];

		snprintf(what, sizeof(what), "expected '%c'", c);
		return json_fail(reader, what);
	}
	reader->at++;
	return true;
}

static void json_put_utf8(struct strbuf *out, unsigned code)
{
	if (code < 0x80) {
		strbuf_putc(out, (char)code);
	} else if (code < 0x800) {
		strbuf_putc(out, (char)(0xc0 | code >> 6));
		strbuf_putc(out, (char)(0x80 | (code & 0x3f)));
	} else if (code < 0x10000) {
		strbuf_putc(out, (char)(0xe0 | code >> 12));
		strbuf_putc(out, (char)(0x80 | (code >> 6 & 0x3f)));
		strbuf_putc(out, (char)(0x80 | (code & 0x3f)));
	} else {
		strbuf_putc(out, (char)(0xf0 | code >> 18));
		strbuf_putc(out, (char)(0x80 | (code >> 12 & 0x3f)));
		strbuf_putc(out, (char)(0x80 | (code >> 6 & 0x3f)));
		strbuf_putc(out, (char)(0x80 | (code & 0x3f)));
	}
}

static bool json_read_hex4(struct json_reader *reader, unsigned *code)
{
	*code = 0;
	for (int i = 0; i < 4; i++) {
		char c = reader->at < reader->length ? reader->text[reader->at] : 0;
		const char *digits = "0123456789abcdef";
		const char *digit = c ? strchr(digits, c | 0x20) : NULL;

		if (!digit)
			return json_fail(reader, "bad \\u escape");
		*code = *code << 4 | (unsigned)(digit - digits);
		reader->at++;
	}
	return true;
}

/* string = '"' *char '"' */
static char *json_read_string(struct json_reader *reader)
{
	struct strbuf out;

	if (!json_expect(reader, '"'))
		return NULL;
	strbuf_init(&out);
	strbuf_puts(&out, "");
	while (reader->at < reader->length && reader->text[reader->at] != '"') {
		char c = reader->text[reader->at++];
		unsigned code, low;

		if ((unsigned char)c < 0x20) {
			reader->at--;
			json_fail(reader, "control character in a string");
			goto fail;
		}
		if (c != '\\') {
			strbuf_putc(&out, c);
			continue;
		}
		c = reader->at < reader->length ? reader->text[reader->at++] : 0;
		switch (c) {
		case '"': case '\\': case '/':
			strbuf_putc(&out, c);
			break;
		case 'b': strbuf_putc(&out, '\b'); break;
		case 'f': strbuf_putc(&out, '\f'); break;
		case 'n': strbuf_putc(&out, '\n'); break;
		case 'r': strbuf_putc(&out, '\r'); break;
		case 't': strbuf_putc(&out, '\t'); break;
		case 'u':
			if (!json_read_hex4(reader, &code))
				goto fail;
			/* a surrogate pair spells one code point past U+FFFF; a
			 * surrogate alone is no character (UTF-8 cannot hold it), so
			 * it becomes U+FFFD, the replacement character */
			if (code >= 0xd800 && code < 0xdc00 && reader->at + 5 < reader->length &&
			    reader->text[reader->at] == '\\' && reader->text[reader->at + 1] == 'u') {
				size_t pair = reader->at;

				reader->at += 2;
				if (!json_read_hex4(reader, &low))
					goto fail;
				if (low >= 0xdc00 && low < 0xe000)
					code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
				else
					reader->at = pair;    /* read the second \u on its own */
			}
			json_put_utf8(&out, code >= 0xd800 && code < 0xe000 ? 0xfffd : code);
			break;
		default:
			json_fail(reader, "bad escape in a string");
			goto fail;
		}
	}
	if (!json_expect(reader, '"'))
		goto fail;
	return strbuf_release(&out);
fail:
	strbuf_free(&out);
	return NULL;
}

static struct json_value *json_new(enum json_kind kind)
{
	struct json_value *value = xcalloc(1, sizeof(*value));

	value->kind = kind;
	return value;
}

/* The arrays grow to the next power of two when count reaches one, so a
 * line of n values costs n, not n squared. */
static void json_append(struct json_value *container, char *key, struct json_value *item)
{
	int count = container->count;

	if ((count & (count - 1)) == 0) {
		size_t capacity = count ? 2 * (size_t)count : 4;

		container->items = xrealloc(container->items, sizeof(*container->items) * capacity);
		if (container->kind == JSON_OBJECT)
			container->keys = xrealloc(container->keys, sizeof(*container->keys) * capacity);
	}
	container->items[container->count] = item;
	if (container->kind == JSON_OBJECT)
		container->keys[container->count] = key;
	container->count++;
}

/* array = '[' [ value *( ',' value ) ] ']'
 * object = '{' [ string ':' value *( ',' string ':' value ) ] '}' */
static struct json_value *json_read_container(struct json_reader *reader, int depth)
{
	bool object = reader->text[reader->at] == '{';
	struct json_value *container = json_new(object ? JSON_OBJECT : JSON_ARRAY);
	char close = object ? '}' : ']';

	reader->at++;
	if (json_peek(reader) == close) {
		reader->at++;
		return container;
	}
	for (;;) {
		char *key = NULL;
		struct json_value *item;

		if (object && (!(key = json_read_string(reader)) || !json_expect(reader, ':'))) {
			free(key);
			break;
		}
		item = json_read_value(reader, depth + 1);
		if (!item) {
			free(key);
			break;
		}
		json_append(container, key, item);
		if (json_peek(reader) == ',') {
			reader->at++;
			continue;
		}
		if (json_expect(reader, close))
			return container;
		break;
	}
	json_free(container);
	return NULL;
}

/* number = [ '-' ] int [ frac ] [ exp ] */
static struct json_value *json_read_number(struct json_reader *reader)
{
	const char *start = reader->text + reader->at;
	size_t span = 0;
	struct json_value *value;
	char *end;

	/* within the line only: text[length] need not end it */
	while (span < reader->length - reader->at && strchr("+-0123456789.eE", start[span]) &&
	       start[span])
		span++;
	value = json_new(JSON_NUMBER);
	value->text = xstrndup(start, span);
	value->number = strtod(value->text, &end);
	if (span == 0 || *end) {
		json_free(value);
		json_fail(reader, "bad number");
		return NULL;
	}
	reader->at += span;
	return value;
}

static bool json_read_word(struct json_reader *reader, const char *word)
{
	size_t length = strlen(word);

	if (reader->length - reader->at < length || memcmp(reader->text + reader->at, word, length))
		return false;
	reader->at += length;
	return true;
}

/* value = object / array / string / number / "true" / "false" / "null" */
static struct json_value *json_read_value(struct json_reader *reader, int depth)
{
	struct json_value *value;
	int c = json_peek(reader);

	if (depth > JSON_DEPTH_MAX) {
		json_fail(reader, "nested too deeply");
		return NULL;
	}
	if (++reader->values > JSON_VALUES_MAX) {
		char what[64];

		snprintf(what, sizeof(what), "more than %d values in one record", JSON_VALUES_MAX);
		json_fail(reader, what);
		return NULL;
	}
	if (c == '{' || c == '[')
		return json_read_container(reader, depth);
	if (c == '"') {
		char *text = json_read_string(reader);

		if (!text)
			return NULL;
		value = json_new(JSON_STRING);
		value->text = text;
		return value;
	}
	if (c == '-' || (c >= '0' && c <= '9'))
		return json_read_number(reader);
	if (json_read_word(reader, "true") || json_read_word(reader, "false")) {
		value = json_new(JSON_BOOL);
		value->boolean = reader->text[reader->at - 1] == 'e' &&
				 reader->text[reader->at - 2] == 'u';
		return value;
	}
	if (json_read_word(reader, "null"))
		return json_new(JSON_NULL);
	json_fail(reader, c < 0 ? "unexpected end of the text" : "unexpected character");
	return NULL;
}

struct json_value *json_parse(const char *text, size_t length, char **error)
{
	struct json_reader reader = { .text = text, .length = length };
	struct json_value *value = json_read_value(&reader, 0);

	if (value && json_peek(&reader) >= 0) {
		json_fail(&reader, "text after the value");
		json_free(value);
		value = NULL;
	}
	if (!value)
		*error = reader.error;
	return value;
}

const struct json_value *json_member(const struct json_value *object, const char *key)
{
	if (!object || object->kind != JSON_OBJECT)
		return NULL;
	for (int i = 0; i < object->count; i++) {
		if (strcmp(object->keys[i], key) == 0)
			return object->items[i];
	}
	return NULL;
}

bool json_member_int(const struct json_value *object, const char *key, int64_t *value)
{
	const struct json_value *member = json_member(object, key);
	char *end;

	if (!member || member->kind != JSON_NUMBER)
		return false;
	/* the text keeps integers past 2^53 exact, and says when one is past
	 * int64 */
	if (!strpbrk(member->text, ".eE")) {
		errno = 0;
		*value = strtoll(member->text, &end, 10);
		return !errno && !*end;
	}
	/* -2^63 <= number < 2^63 (both exact doubles), or the cast is undefined */
	if (!(member->number >= -9223372036854775808.0 && member->number < 9223372036854775808.0) ||
	    member->number != (double)(int64_t)member->number)
		return false;
	*value = (int64_t)member->number;
	return true;
}

void json_free(struct json_value *value)
{
	if (!value)
		return;
	for (int i = 0; i < value->count; i++) {
		json_free(value->items[i]);
		if (value->keys)
			free(value->keys[i]);
	}
	free(value->items);
	free(value->keys);
	free(value->text);
	free(value);
}
