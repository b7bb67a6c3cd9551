/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Type constructors and queries. Types are small and compilation is short,
 * so they are allocated freely and never freed; the common integer types are
 * interned so pointer comparison usually suffices, but type_equal compares
 * structure for everything else.
 */
#include "types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Every type made by type_new, so type_free_all can release them together;
 * enumerations too (several types share one). */
static VEC(struct type *) all_types;
static VEC(struct type_enum *) all_enums;

struct type *type_new(enum type_kind kind)
{
	struct type *type = xcalloc(1, sizeof(*type));
	type->kind = kind;
	vec_push(&all_types, type);
	return type;
}

void type_free_all(void)
{
	for (int i = 0; i < all_types.count; i++) {
		struct type *type = all_types.items[i];
		for (int j = 0; j < type->field_count; j++)
			free(type->fields[j].name);
		free(type->fields);
		free(type->record_name);
		free(type->strftime_format);
		free(type);
	}
	free(all_types.items);
	all_types.items = NULL;
	all_types.count = all_types.capacity = 0;
	for (int i = 0; i < all_enums.count; i++) {
		struct type_enum *enumeration = all_enums.items[i];
		for (int j = 0; j < enumeration->count; j++)
			free(enumeration->items[j].name);
		free(enumeration->items);
		free(enumeration->name);
		free(enumeration);
	}
	free(all_enums.items);
	all_enums.items = NULL;
	all_enums.count = all_enums.capacity = 0;
}

struct type_enum *type_enum_new(const char *name)
{
	struct type_enum *enumeration = xcalloc(1, sizeof(*enumeration));
	enumeration->name = xstrdup(name);
	vec_push(&all_enums, enumeration);
	return enumeration;
}

void type_enum_add(struct type_enum *enumeration, const char *name, int64_t value)
{
	enumeration->items = xrealloc(enumeration->items,
				      (size_t)(enumeration->count + 1) * sizeof(*enumeration->items));
	enumeration->items[enumeration->count].name = xstrdup(name);
	enumeration->items[enumeration->count].value = value;
	enumeration->count++;
}

struct type *type_void(void)
{
	static struct type void_type = { .kind = TYPE_VOID };
	return &void_type;
}

struct type *type_none(void)
{
	static struct type none_type = { .kind = TYPE_NONE };
	return &none_type;
}

struct type *type_int(int size, bool is_signed)
{
	static struct type ints[2][4];
	int index = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
	struct type *type = &ints[is_signed][index];
	type->kind = TYPE_INT;
	type->size = size == 1 || size == 2 || size == 4 ? size : 8;
	type->is_signed = is_signed;
	return type;
}

struct type *type_string(int size)
{
	struct type *type = type_new(TYPE_STRING);
	type->size = size;
	return type;
}

struct type *type_pointer(struct type *pointee, bool is_user)
{
	struct type *type = type_new(TYPE_POINTER);
	type->size = 8;
	type->pointee = pointee;
	type->is_user_pointer = is_user;
	return type;
}

struct type *type_tuple(struct type **elements, int count)
{
	struct type *type = type_new(TYPE_TUPLE);
	type->field_count = count;
	type->fields = xcalloc(count, sizeof(*type->fields));
	int offset = 0;
	for (int i = 0; i < count; i++) {
		type->fields[i].type = elements[i];
		type->fields[i].offset = offset;
		offset += (type_storage_size(elements[i]) + 7) & ~7;
	}
	type->size = offset;
	return type;
}

struct type *type_named_int(const struct int_names *names)
{
	struct type *type = type_new(TYPE_INT);
	type->size = 8;
	type->is_signed = true;
	type->int_names = names;
	return type;
}

struct type *type_bool(void)
{
	static struct type bool_type = { .kind = TYPE_INT, .size = 1, .is_bool = true };
	return &bool_type;
}

struct type *type_enum_int(const struct type_enum *enumeration, int size)
{
	struct type *type = type_new(TYPE_INT);
	type->size = size;
	type->enumeration = enumeration;
	for (int i = 0; i < enumeration->count; i++)
		if (enumeration->items[i].value < 0)
			type->is_signed = true;
	return type;
}

const char *type_enum_value_name(const struct type_enum *enumeration, int64_t value)
{
	for (int i = 0; enumeration && i < enumeration->count; i++)
		if (enumeration->items[i].value == value)
			return enumeration->items[i].name;
	return NULL;
}

struct type *type_widened(struct type *type)
{
	if (!type || type->kind != TYPE_INT || type->size == 8)
		return type;
	if (type->int_names) {
		struct type *named = type_named_int(type->int_names);
		named->is_signed = type->is_signed;
		return named;
	}
	if (type->enumeration) {
		struct type *named = type_enum_int(type->enumeration, 8);
		named->is_signed = type->is_signed;
		return named;
	}
	if (type->is_bool) {
		static struct type wide_bool = { .kind = TYPE_INT, .size = 8, .is_bool = true };
		return &wide_bool;
	}
	return type_int(8, type->is_signed);
}

bool type_is_aggregation(const struct type *type)
{
	return type && type->kind == TYPE_AGGREGATION;
}

bool type_is_integer_like(const struct type *type)
{
	return type && (type->kind == TYPE_INT || type->kind == TYPE_POINTER);
}

bool type_equal(const struct type *a, const struct type *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->kind != b->kind)
		return false;
	switch (a->kind) {
	case TYPE_INT:
		return a->size == b->size && a->is_signed == b->is_signed &&
		       a->int_names == b->int_names &&
		       !a->strftime_format == !b->strftime_format &&
		       (!a->strftime_format || strcmp(a->strftime_format, b->strftime_format) == 0);
	case TYPE_STRING:
		return a->size == b->size;
	case TYPE_TUPLE:
		if (a->field_count != b->field_count)
			return false;
		for (int i = 0; i < a->field_count; i++) {
			const char *x = a->fields[i].name, *y = b->fields[i].name;
			if (!type_equal(a->fields[i].type, b->fields[i].type) ||
			    (x || y ? !x || !y || strcmp(x, y) != 0 : false))
				return false;
		}
		return true;
	case TYPE_POINTER:
		return type_equal(a->pointee, b->pointee);
	case TYPE_ARRAY:
		return a->array_length == b->array_length && type_equal(a->pointee, b->pointee);
	case TYPE_RECORD:
		return a->record_name && b->record_name &&
		       strcmp(a->record_name, b->record_name) == 0;
	case TYPE_STACK:
		return a->is_user_pointer == b->is_user_pointer && a->stack_depth == b->stack_depth &&
		       a->stack_mode == b->stack_mode;
	case TYPE_SYMBOL:
		return a->is_user_pointer == b->is_user_pointer;
	case TYPE_BUFFER:
		return a->size == b->size;
	case TYPE_AGGREGATION:
		return a->aggregation == b->aggregation &&
		       memcmp(a->aggregation_params, b->aggregation_params,
			      sizeof(a->aggregation_params)) == 0;
	default:
		return true;
	}
}

int type_matching_field(const struct type *tuple, const struct type *like, int index)
{
	const char *name = like->fields[index].name;
	if (!name)
		return index < tuple->field_count && !tuple->fields[index].name ? index : -1;
	for (int i = 0; i < tuple->field_count; i++)
		if (tuple->fields[i].name && strcmp(tuple->fields[i].name, name) == 0)
			return i;
	return -1;
}

int type_pointer_step(const struct type *pointer)
{
	const struct type *target = pointer ? pointer->pointee : NULL;
	if (!target)
		return 1;
	if (target->kind == TYPE_POINTER)
		return 8;
	return target->size > 0 ? target->size : 1;
}

int type_storage_size(const struct type *type)
{
	if (!type)
		return 0;
	if (type->kind == TYPE_INT || type->kind == TYPE_POINTER)
		return 8;
	return type->size;
}

const char *type_kind_name(enum type_kind kind)
{
	switch (kind) {
	case TYPE_NONE: return "none";
	case TYPE_VOID: return "void";
	case TYPE_INT: return "integer";
	case TYPE_STRING: return "string";
	case TYPE_TUPLE: return "tuple";
	case TYPE_POINTER: return "pointer";
	case TYPE_RECORD: return "struct";
	case TYPE_INET: return "inet";
	case TYPE_AGGREGATION: return "aggregation";
	case TYPE_ARRAY: return "array";
	case TYPE_STACK: return "stack";
	case TYPE_SYMBOL: return "symbol";
	case TYPE_BUFFER: return "buffer";
	}
	return "?";
}

static void type_describe(struct strbuf *sb, const struct type *type)
{
	switch (type->kind) {
	case TYPE_INT:
		if (type->enumeration)
			strbuf_puts(sb, type->enumeration->name);
		else if (type->is_bool)
			strbuf_puts(sb, "bool");
		else
			strbuf_printf(sb, "%sint%d", type->is_signed ? "" : "u", type->size * 8);
		break;
	case TYPE_STRING:
		strbuf_printf(sb, "string[%d]", type->size);
		break;
	case TYPE_TUPLE:
		strbuf_putc(sb, '(');
		for (int i = 0; i < type->field_count; i++) {
			if (i)
				strbuf_puts(sb, ", ");
			if (type->fields[i].name) /* a record: (a=int64, b=string[4]) */
				strbuf_printf(sb, "%s=", type->fields[i].name);
			type_describe(sb, type->fields[i].type);
		}
		strbuf_putc(sb, ')');
		break;
	case TYPE_POINTER:
		if (type->pointee)
			type_describe(sb, type->pointee);
		else
			strbuf_puts(sb, "void");
		strbuf_puts(sb, " *");
		break;
	case TYPE_RECORD:
		strbuf_puts(sb, type->record_name ? type->record_name : "struct");
		break;
	case TYPE_ARRAY:
		if (type->pointee)
			type_describe(sb, type->pointee);
		strbuf_printf(sb, "[%d]", type->array_length);
		break;
	case TYPE_AGGREGATION:
		strbuf_printf(sb, "%s()", type->aggregation_name);
		break;
	default:
		strbuf_puts(sb, type_kind_name(type->kind));
		break;
	}
}

const char *type_name(const struct type *type)
{
	/* A few rotating buffers: error messages name at most two types at once. */
	static char *names[4];
	static int next;
	struct strbuf sb;
	strbuf_init(&sb);
	if (type)
		type_describe(&sb, type);
	else
		strbuf_puts(&sb, "none");
	free(names[next]);
	names[next] = strbuf_release(&sb);
	const char *result = names[next];
	next = (next + 1) % 4;
	return result;
}
