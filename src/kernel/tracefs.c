/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracefs: finding tracepoints and reading their record layouts.
 *
 * The list of tracepoints comes from available_events ("category:name" per
 * line) rather than from walking events/: it holds exactly the events that
 * can be enabled, leaving out ftrace's internal entries (ftrace:function and
 * friends) that have a format file but nothing a program could attach to.
 *
 * A format file describes the record the kernel hands a tracepoint program:
 *
 *     ID: 782
 *     format:
 *         field:unsigned short common_type;  offset:0;  size:2;  signed:0;
 *         ...
 *         field:const char * filename;       offset:24; size:8;  signed:0;
 *
 * Each field line gives a C declaration plus offset, size and signedness.
 * The size and signed columns win over the declared C type: syscall
 * tracepoints declare `int flags` but store it in 8 bytes, and the 8-byte
 * load is the right one. Mapping to sonde types:
 *
 *   scalar                  TYPE_INT of the field's size and signedness
 *   char x[N]               TYPE_STRING of N bytes
 *   other arrays T x[N]     TYPE_ARRAY of N elements of T's sonde type (the
 *                           element size is size / N); x[] is a flexible
 *                           array of length 0, still indexable
 *   T *x                    TYPE_POINTER; user memory for syscalls:* (these
 *                           are the syscall's own arguments), kernel otherwise
 *   __data_loc char[] x     TYPE_STRING with is_data_loc: the field holds a
 *                           u32 whose low half is the string's offset in the
 *                           record and whose high half is its length
 *   __data_loc T[], __rel_loc ...   the raw u32 word, as an unsigned int
 */
#include "tracefs.h"

#include "btf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Checked in this order: the modern mount point, then the one under debugfs
 * that kernels before 4.1 (and some distributions still) use. */
static const char *const tracefs_candidates[] = {
	"/sys/kernel/tracing",
	"/sys/kernel/debug/tracing",
};

/* Why the last tracefs_root() found nothing usable: the first candidate that
 * exists but cannot be entered, if any. */
static const char *denied_root;

const char *tracefs_root(void)
{
	static const char *found;
	char path[256];

	if (found)
		return found;
	denied_root = NULL;
	for (size_t i = 0; i < sizeof(tracefs_candidates) / sizeof(tracefs_candidates[0]); i++) {
		/* An empty mount point directory exists even when tracefs is not
		 * mounted there; the events directory only when it is. */
		snprintf(path, sizeof(path), "%s/events", tracefs_candidates[i]);
		if (access(path, F_OK) == 0) {
			found = tracefs_candidates[i];
			return found;
		}
		if (errno == EACCES && !denied_root)
			denied_root = tracefs_candidates[i];
	}
	return NULL;
}

int tracefs_require(const char **root, char **error)
{
	*root = tracefs_root();
	if (*root)
		return 0;
	if (denied_root) {
		*error = xasprintf("no permission to read tracefs at %s; sonde needs root",
				   denied_root);
		return -EACCES;
	}
	*error = xasprintf("tracefs is not mounted at /sys/kernel/tracing or "
			   "/sys/kernel/debug/tracing; mount it with "
			   "'mount -t tracefs nodev /sys/kernel/tracing'");
	return -ENOENT;
}

/* The i-th character of "category:name", or '\0' past its end. */
static unsigned char joined_char(const struct tracepoint_name *tp, size_t category_length,
				 size_t i)
{
	if (i < category_length)
		return (unsigned char)tp->category[i];
	if (i == category_length)
		return ':';
	return (unsigned char)tp->name[i - category_length - 1];
}

/* Orders as "category:name" strings compare, which is bpftrace's -l order
 * ("fib6:..." before "fib:..."), without building the strings. */
static int compare_tracepoints(const void *a, const void *b)
{
	const struct tracepoint_name *x = a, *y = b;
	size_t x_length = strlen(x->category), y_length = strlen(y->category);

	for (size_t i = 0;; i++) {
		unsigned char cx = joined_char(x, x_length, i), cy = joined_char(y, y_length, i);
		if (cx != cy || cx == '\0')
			return (int)cx - (int)cy;
	}
}

/* A name that is one path component: not empty, no slash, not . or .. */
static bool plain_name(const char *name)
{
	return name[0] && !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

int tracefs_find(const char *category_pattern, const char *name_pattern,
		 tracepoint_list *out, char **error)
{
	const char *root;
	char *path, *text, *line, *next, *colon;
	int first = out->count;
	int err;

	err = tracefs_require(&root, error);
	if (err)
		return err;
	/* One exact name: whether its directory has an enable file says what
	 * available_events would (the entries it leaves out have none), and
	 * costs one lookup instead of reading all ~2,000 lines. */
	if (!has_wildcard(category_pattern) && !has_wildcard(name_pattern) &&
	    plain_name(category_pattern) && plain_name(name_pattern)) {
		path = xasprintf("%s/events/%s/%s/enable", root, category_pattern, name_pattern);
		if (access(path, F_OK) == 0) {
			struct tracepoint_name tp = { xstrdup(category_pattern), xstrdup(name_pattern) };
			vec_push(out, tp);
		}
		free(path);
		return 0;
	}
	path = xasprintf("%s/available_events", root);
	text = read_file(path, NULL);
	if (!text) {
		err = -errno;
		*error = xasprintf("cannot read %s: %s", path, strerror(errno));
		free(path);
		return err;
	}
	free(path);

	for (line = text; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		if (!wildcard_match(category_pattern, line) || !wildcard_match(name_pattern, colon + 1))
			continue;
		struct tracepoint_name tp = { xstrdup(line), xstrdup(colon + 1) };
		vec_push(out, tp);
	}
	free(text);
	if (out->count - first > 1)
		qsort(out->items + first, (size_t)(out->count - first), sizeof(*out->items),
		      compare_tracepoints);
	return 0;
}

void tracepoint_list_free(tracepoint_list *list)
{
	for (int i = 0; i < list->count; i++) {
		free(list->items[i].category);
		free(list->items[i].name);
	}
	free(list->items);
	list->items = NULL;
	list->count = list->capacity = 0;
}

/* ---- format files ---- */

/* A field declaration taken apart: "const char *const * argv" gives
 * base "char", pointer_depth 2. */
struct field_decl {
	char base[128];     /* element type without const/volatile and '*' */
	char name[128];
	int pointer_depth;
	bool is_array;
	int array_count;    /* 0 for a flexible array "x[]" */
	bool is_data_loc;
	bool is_rel_loc;
};

static const struct {
	const char *name;
	int size;
	bool is_signed;
} c_int_types[] = {
	{ "char", 1, true },          { "signed char", 1, true },
	{ "unsigned char", 1, false }, { "bool", 1, false },
	{ "_Bool", 1, false },        { "u8", 1, false },
	{ "s8", 1, true },            { "__u8", 1, false },
	{ "__s8", 1, true },          { "uint8_t", 1, false },
	{ "int8_t", 1, true },        { "short", 2, true },
	{ "unsigned short", 2, false }, { "u16", 2, false },
	{ "s16", 2, true },           { "__u16", 2, false },
	{ "__s16", 2, true },         { "uint16_t", 2, false },
	{ "int16_t", 2, true },       { "int", 4, true },
	{ "unsigned int", 4, false }, { "unsigned", 4, false },
	{ "u32", 4, false },          { "s32", 4, true },
	{ "__u32", 4, false },        { "__s32", 4, true },
	{ "uint32_t", 4, false },     { "int32_t", 4, true },
	{ "pid_t", 4, true },         { "uid_t", 4, false },
	{ "gid_t", 4, false },        { "long", 8, true },
	{ "unsigned long", 8, false }, { "long long", 8, true },
	{ "unsigned long long", 8, false }, { "u64", 8, false },
	{ "s64", 8, true },           { "__u64", 8, false },
	{ "__s64", 8, true },         { "uint64_t", 8, false },
	{ "int64_t", 8, true },       { "size_t", 8, false },
	{ "ssize_t", 8, true },       { "loff_t", 8, true },
};

static bool c_int_type(const char *name, int *size, bool *is_signed)
{
	for (size_t i = 0; i < sizeof(c_int_types) / sizeof(c_int_types[0]); i++) {
		if (strcmp(c_int_types[i].name, name) == 0) {
			*size = c_int_types[i].size;
			*is_signed = c_int_types[i].is_signed;
			return true;
		}
	}
	return false;
}

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Copies the words of type_text into base, dropping qualifiers and '*'
 * (counted into *depth) and collapsing whitespace. */
static void decl_base_type(const char *type_text, char *base, size_t base_size, int *depth)
{
	size_t used = 0;
	const char *p = type_text;

	*depth = 0;
	base[0] = '\0';
	while (*p) {
		if (*p == '*') {
			(*depth)++;
			p++;
			continue;
		}
		if (!is_ident_char(*p)) {
			p++;
			continue;
		}
		const char *word = p;
		while (is_ident_char(*p))
			p++;
		size_t length = (size_t)(p - word);
		if ((length == 5 && strncmp(word, "const", 5) == 0) ||
		    (length == 8 && strncmp(word, "volatile", 8) == 0))
			continue;
		if (used + length + 2 > base_size)
			break;
		if (used)
			base[used++] = ' ';
		memcpy(base + used, word, length);
		used += length;
		base[used] = '\0';
	}
}

/*
 * decl := ["__data_loc" | "__rel_loc"] type-words ['*'...] name ['[' [N] ']']
 *
 * For __data_loc the brackets belong to the type ("__data_loc char[] name").
 */
static bool parse_field_decl(const char *text, struct field_decl *decl)
{
	char buf[256];
	char *end, *name_start, *bracket;
	size_t length = strlen(text);

	memset(decl, 0, sizeof(*decl));
	if (length >= sizeof(buf))
		return false;
	memcpy(buf, text, length + 1);
	end = buf + length;
	while (end > buf && isspace((unsigned char)end[-1]))
		*--end = '\0';

	if (end > buf && end[-1] == ']') {
		bracket = strrchr(buf, '[');
		if (!bracket)
			return false;
		decl->is_array = true;
		decl->array_count = atoi(bracket + 1);
		*bracket = '\0';
		end = bracket;
		while (end > buf && isspace((unsigned char)end[-1]))
			*--end = '\0';
	}
	name_start = end;
	while (name_start > buf && is_ident_char(name_start[-1]))
		name_start--;
	if (name_start == end || (size_t)(end - name_start) >= sizeof(decl->name))
		return false;
	memcpy(decl->name, name_start, (size_t)(end - name_start) + 1);
	*name_start = '\0';

	char *type_text = buf;
	while (isspace((unsigned char)*type_text))
		type_text++;
	if (strncmp(type_text, "__data_loc", 10) == 0 && isspace((unsigned char)type_text[10])) {
		decl->is_data_loc = true;
		type_text += 10;
	} else if (strncmp(type_text, "__rel_loc", 9) == 0 && isspace((unsigned char)type_text[9])) {
		decl->is_rel_loc = true;
		type_text += 9;
	}
	if (decl->is_data_loc || decl->is_rel_loc) {
		bracket = strchr(type_text, '[');
		if (bracket) {
			decl->is_array = true;
			decl->array_count = 0;
			*bracket = '\0';
		}
	}
	decl_base_type(type_text, decl->base, sizeof(decl->base), &decl->pointer_depth);
	return decl->base[0] != '\0';
}

static bool base_is_char(const char *base)
{
	return strcmp(base, "char") == 0 || strcmp(base, "signed char") == 0;
}

/* What a pointer field points at: the element type when it is a known
 * integer, the kernel's struct from BTF for `struct X *` (so that
 * args->rqtp->tv_sec works), bytes otherwise (void *). BTF is touched only
 * for struct pointers. */
static struct type *pointer_type(const struct field_decl *decl, bool is_user)
{
	int size;
	bool is_signed;
	struct type *type = NULL;

	if (strncmp(decl->base, "struct ", 7) == 0 || strncmp(decl->base, "union ", 6) == 0)
		type = btf_lazy_record(decl->base);
	if (type) {
		for (int i = 0; i < decl->pointer_depth; i++)
			type = type_pointer(type, is_user);
		return type;
	}
	if (!c_int_type(decl->base, &size, &is_signed)) {
		size = 1;
		is_signed = false;
	}
	type = type_int(size, is_signed);
	for (int i = 0; i < decl->pointer_depth; i++)
		type = type_pointer(type, is_user);
	return type;
}

/* The element of an array field: pointers as pointer_type() makes them,
 * integers sized from the field (size / count) when that divides evenly,
 * else from the C type name; NULL when the element is not 1, 2, 4 or 8 bytes
 * (an array of structs). */
static struct type *array_element_type(const struct field_decl *decl, int size, bool is_signed,
				       bool user_pointers)
{
	int element_size;
	bool element_signed;

	if (decl->pointer_depth > 0)
		return pointer_type(decl, user_pointers);
	if (decl->array_count > 0 && size % decl->array_count == 0) {
		element_size = size / decl->array_count;
		element_signed = is_signed;
	} else if (!c_int_type(decl->base, &element_size, &element_signed)) {
		element_size = 1;
		element_signed = false;
	}
	if (element_size != 1 && element_size != 2 && element_size != 4 && element_size != 8)
		return NULL;
	return type_int(element_size, element_signed);
}

/* The sonde type of one field; NULL for a field sonde cannot represent. */
static struct type *field_type(const struct field_decl *decl, int size, bool is_signed,
			       bool user_pointers)
{
	struct type *type;

	if (decl->is_data_loc && base_is_char(decl->base) && decl->pointer_depth == 0) {
		type = type_string(TRACEFS_DATA_LOC_STRING_SIZE);
		type->is_data_loc = true;
		return type;
	}
	if (decl->is_data_loc || decl->is_rel_loc)
		return type_int(4, false);
	if (decl->pointer_depth > 0 && !decl->is_array)
		return pointer_type(decl, user_pointers);
	if (decl->is_array) {
		if (base_is_char(decl->base) && decl->pointer_depth == 0 && decl->array_count > 0)
			return type_string(size);
		struct type *element = array_element_type(decl, size, is_signed, user_pointers);
		if (!element)
			return NULL;
		type = type_new(TYPE_ARRAY);
		type->pointee = element;
		type->array_length = decl->array_count;
		type->size = element->size * decl->array_count;
		return type;
	}
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return NULL;
	return type_int(size, is_signed);
}

/* Reads the integer after `key` in line; false when key is absent. */
static bool field_attribute(const char *line, const char *key, int *value)
{
	const char *at = strstr(line, key);
	if (!at)
		return false;
	*value = atoi(at + strlen(key));
	return true;
}

int tracefs_parse_format(const char *text, const char *category, const char *name,
			 struct tracepoint_format *format, char **error)
{
	VEC(struct type_field) fields = { 0 };
	VEC(char *) decls = { 0 };
	struct type *record;
	bool user_pointers = strcmp(category, "syscalls") == 0;
	bool have_id = false;
	int record_size = 0;

	memset(format, 0, sizeof(*format));
	for (const char *line = text; *line;) {
		const char *line_end = strchr(line, '\n');
		if (!line_end)
			line_end = line + strlen(line);
		char *copy = xstrndup(line, (size_t)(line_end - line));
		line = *line_end ? line_end + 1 : line_end;

		char *p = copy;
		while (isspace((unsigned char)*p))
			p++;
		if (strncmp(p, "ID:", 3) == 0) {
			format->id = atoi(p + 3);
			have_id = true;
		} else if (strncmp(p, "field:", 6) == 0) {
			char *decl_text = p + 6;
			char *semicolon = strchr(decl_text, ';');
			struct field_decl decl;
			int offset, size, is_signed = 0;

			if (!semicolon || !field_attribute(semicolon, "offset:", &offset) ||
			    !field_attribute(semicolon, "size:", &size)) {
				free(copy);
				continue;
			}
			/* Kernels before 2.6.37 lack the signed column. */
			field_attribute(semicolon, "signed:", &is_signed);
			*semicolon = '\0';
			if (!parse_field_decl(decl_text, &decl) ||
			    strncmp(decl.name, "common_", 7) == 0) {
				free(copy);
				continue;
			}
			struct type *type = field_type(&decl, size, is_signed != 0, user_pointers);
			if (type) {
				struct type_field field = {
					.name = xstrdup(decl.name),
					.type = type,
					.offset = offset,
				};
				vec_push(&fields, field);
				vec_push(&decls, xstrdup(decl_text));
				if (offset + size > record_size)
					record_size = offset + size;
			}
		}
		free(copy);
	}
	if (!have_id) {
		for (int i = 0; i < decls.count; i++)
			free(decls.items[i]);
		free(decls.items);
		free(fields.items);
		*error = xasprintf("format of tracepoint %s:%s has no ID line", category, name);
		return -EINVAL;
	}

	record = type_new(TYPE_RECORD);
	record->record_name = xasprintf("struct _tracepoint_%s_%s", category, name);
	record->field_count = fields.count;
	record->fields = fields.items;
	record->size = record_size;
	vec_push(&decls, NULL);
	format->record = record;
	format->decls = decls.items;
	return 0;
}

int tracefs_read_format(const char *category, const char *name,
			struct tracepoint_format *format, char **error)
{
	const char *root;
	char *path, *text;
	int err;

	err = tracefs_require(&root, error);
	if (err)
		return err;
	path = xasprintf("%s/events/%s/%s/format", root, category, name);
	text = read_file(path, NULL);
	if (!text) {
		err = -errno;
		if (err == -ENOENT)
			*error = xasprintf("tracepoint not found: %s:%s", category, name);
		else
			*error = xasprintf("cannot read %s: %s", path, strerror(-err));
		free(path);
		return err;
	}
	free(path);
	err = tracefs_parse_format(text, category, name, format, error);
	free(text);
	return err;
}

void tracepoint_format_free(struct tracepoint_format *format)
{
	if (format->decls) {
		for (char **decl = format->decls; *decl; decl++)
			free(*decl);
		free(format->decls);
	}
	format->decls = NULL;
}
