/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small JSON reader for the records sonde and bpftrace print with
 * `-f json` (one record a line). It builds a tree of values; numbers are
 * kept as text and as a double, strings are unescaped (\uXXXX becomes
 * UTF-8). It is meant for trusted, line-sized input: nesting is limited to
 * JSON_DEPTH_MAX so that a hostile line cannot exhaust the stack.
 */
#ifndef SONDE_JSON_H
#define SONDE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_DEPTH_MAX 64

enum json_kind {
	JSON_NULL,      /* null */
	JSON_BOOL,      /* true or false, in boolean */
	JSON_NUMBER,    /* in number (and text, as written) */
	JSON_STRING,    /* in text, unescaped */
	JSON_ARRAY,     /* items */
	JSON_OBJECT,    /* members: keys[i] names items[i] */
};

struct json_value {
	enum json_kind kind;
	bool boolean;
	double number;
	char *text;
	struct json_value **items;
	char **keys;
	int count;
};

/* Parses text[0..length) as one JSON value (surrounding white space
 * allowed). NULL with *error set ("... at column N") when it is not. */
struct json_value *json_parse(const char *text, size_t length, char **error);
/* The member named key of an object, or NULL. */
const struct json_value *json_member(const struct json_value *object, const char *key);
/* A number member as an integer; false if missing or not an integer. */
bool json_member_int(const struct json_value *object, const char *key, int64_t *value);
void json_free(struct json_value *value);

#endif
