/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Type names in a program, and the C definitions that introduce new ones.
 *
 * A name written in a cast, sizeof, offsetof or a definition's field is
 * looked up in this order: sonde's integer names (uint32, pid_t, ...), then
 * `void *`, then the struct, union, enum and typedef definitions at the top
 * of the script, then the kernel's BTF. So a script may describe a user
 * program's struct for a uprobe (`struct point { int x, y; }` then
 * `((struct point *)arg0)->y`), and, as in bpftrace, a script's definition
 * of a kernel type takes precedence over BTF's.
 *
 * Definitions become ordinary TYPE_RECORDs laid out by the x86-64 C rules:
 * each member at the next multiple of its alignment (an integer's size, 8
 * for a pointer, a record's largest member alignment), the size rounded up
 * to the record's alignment, every member of a union at 0. A bitfield takes
 * the next bits of the current storage unit of its declared type and moves
 * to the next unit when it would straddle one; it is described as that unit
 * and a bit position, the way btf.c describes the kernel's bitfields, so the
 * code generator reads both alike.
 *
 * gcc's `packed` and `aligned(N)` attributes change those rules as gcc
 * does: a packed member (every member of a packed record) is aligned to 1,
 * and a packed bitfield takes the very next bit even when that straddles a
 * unit (it is then read from the byte it starts in, with as many bytes as
 * it spans); `aligned(N)` raises a member's or a record's alignment to N
 * (and, on a packed member, sets it). A record's alignment is kept in its
 * type (declared_align), so a packed record inside another is placed at
 * any byte, as in C.
 *
 * Enums are integers that remember their enumeration: an enumerator is an
 * 8-byte constant of its enum's type, `(enum foo)x` gives x that type, and a
 * field declared `enum foo` reads 4 bytes of it. The printers show such a
 * value by its enumerator's name (as current bpftrace does).
 */
#include "sema_internal.h"

#include <stdlib.h>
#include <string.h>

#include "../kernel/btf.h"

/* A name the script defined: "struct point", "enum colour", "u32_t". */
struct script_type {
	char *name;
	struct type *type;
	bool is_defining;   /* its fields are being laid out: only a pointer may refer to it */
};

struct script_enumerator {
	char *name;
	int64_t value;
	struct type *type;  /* 8 bytes, the enum's enumeration */
};

struct script_types {
	VEC(struct script_type) types;
	VEC(struct script_enumerator) enumerators;
};

/* ---- lookups ---- */

struct type *parse_int_type_name(const char *name)
{
	static const struct { const char *name; int size; bool is_signed; } names[] = {
		{ "int8", 1, true },   { "uint8", 1, false },  { "int16", 2, true },
		{ "uint16", 2, false }, { "int32", 4, true },  { "uint32", 4, false },
		{ "int64", 8, true },  { "uint64", 8, false }, { "bool", 1, false },
		{ "char", 1, true },   { "short", 2, true },   { "int", 4, true },
		{ "long", 8, true },   { "unsigned int", 4, false }, { "unsigned long", 8, false },
		{ "u8", 1, false }, { "u16", 2, false }, { "u32", 4, false }, { "u64", 8, false },
		{ "s8", 1, true }, { "s16", 2, true }, { "s32", 4, true }, { "s64", 8, true },
		{ "pid_t", 4, true }, { "uid_t", 4, false }, { "gid_t", 4, false }, { "size_t", 8, false },
		{ "ssize_t", 8, true }, { "off_t", 8, true }, { "unsigned char", 1, false },
		{ "unsigned short", 2, false }, { "long long", 8, true }, { "unsigned long long", 8, false },
		{ "signed char", 1, true }, { "unsigned", 4, false }, { "signed", 4, true },
		{ "signed int", 4, true }, { "long int", 8, true }, { "unsigned long int", 8, false },
		{ "short int", 2, true }, { "unsigned short int", 2, false }, { "signed long", 8, true },
		{ "long long int", 8, true }, { "unsigned long long int", 8, false },
		{ "__u8", 1, false }, { "__u16", 2, false }, { "__u32", 4, false }, { "__u64", 8, false },
		{ "__s8", 1, true }, { "__s16", 2, true }, { "__s32", 4, true }, { "__s64", 8, true },
		{ "uint8_t", 1, false }, { "uint16_t", 2, false }, { "uint32_t", 4, false },
		{ "uint64_t", 8, false }, { "int8_t", 1, true }, { "int16_t", 2, true },
		{ "int32_t", 4, true }, { "int64_t", 8, true }, { "uintptr_t", 8, false },
		{ "intptr_t", 8, true },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(names[i].name, name) == 0)
			return type_int(names[i].size, names[i].is_signed);
	return NULL;
}

static struct script_type *script_type_find(const struct sema *sema, const char *name)
{
	struct script_types *table = sema->script_types;
	for (int i = 0; table && i < table->types.count; i++)
		if (strcmp(table->types.items[i].name, name) == 0)
			return &table->types.items[i];
	return NULL;
}

struct type *sema_plain_type_name(const struct sema *sema, const char *name)
{
	struct type *type = parse_int_type_name(name);
	if (type)
		return type;
	/* only typedef names are single words */
	struct script_type *defined = strchr(name, ' ') ? NULL : script_type_find(sema, name);
	return defined ? defined->type : NULL;
}

bool sema_enumerator(const struct sema *sema, const char *name, int64_t *value, struct type **type)
{
	struct script_types *table = sema->script_types;
	for (int i = 0; table && i < table->enumerators.count; i++) {
		if (strcmp(table->enumerators.items[i].name, name) == 0) {
			*value = table->enumerators.items[i].value;
			*type = table->enumerators.items[i].type;
			return true;
		}
	}
	return false;
}

/* The base type of a spelling without its stars, or NULL with *error set.
 * allow_opaque: a pointer to a struct defined nowhere is allowed (a field
 * of a definition, as C allows); a cast to one is an error, most likely a
 * typo. */
static struct type *resolve_base(struct sema *sema, const char *name, bool is_pointer,
				 bool allow_opaque, char **error)
{
	struct type *type = parse_int_type_name(name);
	if (type)
		return type;
	if (strcmp(name, "void") == 0) {
		if (is_pointer)
			return NULL; /* the caller makes `void *` */
		*error = xasprintf("'void' is not a value type; cast to a pointer: (void *)");
		return NULL;
	}
	struct script_type *defined = script_type_find(sema, name);
	if (defined) {
		if (defined->is_defining && !is_pointer) {
			*error = xasprintf("'%s' contains itself: a field of its own type must be a "
					   "pointer", name);
			return NULL;
		}
		return defined->type;
	}
	if (!btf_available()) {
		*error = xasprintf("cannot resolve '%s': this kernel has no BTF type information "
				   "(/sys/kernel/btf/vmlinux)", name);
		return NULL;
	}
	type = btf_type_by_name(name);
	if (!type && is_pointer && allow_opaque &&
	    (strncmp(name, "struct ", 7) == 0 || strncmp(name, "union ", 6) == 0)) {
		/* a pointer to a struct defined nowhere: C allows it; it cannot
		 * be followed (no fields), but it can be held and printed */
		type = type_new(TYPE_RECORD);
		type->record_name = xstrdup(name);
		return type;
	}
	if (!type)
		*error = xasprintf("unknown type '%s' (not in the kernel's BTF)", name);
	return type;
}

static struct type *resolve_type(struct sema *sema, const char *name, bool allow_opaque, char **error)
{
	size_t length = strlen(name);
	int pointer_depth = 0;
	while (length > 0 && (name[length - 1] == '*' || name[length - 1] == ' ')) {
		if (name[length - 1] == '*')
			pointer_depth++;
		length--;
	}
	char *base_name = xstrndup(name, length);
	*error = NULL;
	struct type *type = resolve_base(sema, base_name, pointer_depth > 0, allow_opaque, error);
	free(base_name);
	if (!type && *error)
		return NULL;
	for (int i = 0; i < pointer_depth; i++)
		type = type_pointer(type, false);
	return type;
}

struct type *sema_resolve_type(struct sema *sema, const char *name, char **error)
{
	return resolve_type(sema, name, false, error);
}

/* ---- casts ---- */

void sema_check_cast(struct sema *sema, struct node *node)
{
	sema_check_expr(sema, node->lhs);
	char *error = NULL;
	struct type *target = sema_resolve_type(sema, node->name, &error);
	if (!target) {
		sema_error(sema, node->loc, "%s", error);
		free(error);
		node->type = type_none();
		return;
	}
	if (target->kind == TYPE_RECORD) {
		sema_error(sema, node->loc, "cannot cast a value to %s; cast to a pointer: (%s *)",
			 node->name, node->name);
		node->type = type_none();
		return;
	}
	if (node->lhs->type && node->lhs->type->kind != TYPE_NONE && !sema_is_int(node->lhs)) {
		sema_error(sema, node->lhs->loc, "cannot cast %s to %s", type_name(node->lhs->type),
			 node->name);
		node->type = type_none();
		return;
	}
	/* (enum foo)x keeps all 64 bits, as bpftrace's enum casts do */
	node->type = target->enumeration ? type_widened(target) : target;
	if (strcmp(node->name, "bool") == 0)
		node->type = type_bool(); /* x != 0, not its low byte */
	/* in a uprobe or USDT probe a number made a pointer is an address in
	 * the process, as bpftrace's casts are */
	if (target->kind == TYPE_POINTER && sema->point && sema->point->provider->user_space)
		node->type = type_pointer(target->pointee, true);
}

bool sema_reached_from_user(const struct node *node)
{
	for (int depth = 0; node && depth < 64; depth++, node = node->lhs) {
		if (node->kind != NODE_FIELD && node->kind != NODE_INDEX &&
		    !(node->kind == NODE_UNARY && node->op == OP_DEREF))
			return false;
		const struct type *base = node->lhs ? node->lhs->type : NULL;
		if (base && base->kind == TYPE_POINTER)
			return base->is_user_pointer;
	}
	return false;
}

struct type *sema_user_pointer_if(struct type *type, const struct node *node)
{
	if (type && type->kind == TYPE_POINTER && !type->is_user_pointer && sema_reached_from_user(node))
		return type_pointer(type->pointee, true);
	return type;
}

/* ---- records ---- */

void sema_name_record_fields(struct sema *sema, struct node *tuple)
{
	struct type *named = type_new(TYPE_TUPLE);
	*named = *tuple->type;
	named->fields = xcalloc((size_t)named->field_count, sizeof(*named->fields));
	struct node *name = tuple->rhs;
	for (int i = 0; i < named->field_count && name; i++, name = name->next) {
		for (struct node *before = tuple->rhs; before != name; before = before->next) {
			if (strcmp(before->string_value, name->string_value) == 0) {
				sema_error(sema, name->loc, "field '%s' appears twice in the record",
					   name->string_value);
				break;
			}
		}
		named->fields[i] = tuple->type->fields[i];
		named->fields[i].name = xstrdup(name->string_value);
	}
	tuple->type = named;
}

int sema_record_field_index(struct sema *sema, struct node *field)
{
	const struct type *record = field->lhs->type;
	if (record->field_count == 0 || !record->fields[0].name)
		return 0;
	for (int i = 0; i < record->field_count; i++) {
		if (strcmp(record->fields[i].name, field->name) == 0) {
			field->kind = NODE_TUPLE_INDEX;
			field->int_value = (uint64_t)i;
			return 1;
		}
	}
	sema_error(sema, field->loc, "the record has no field named '%s'", field->name);
	return -1;
}

bool sema_same_field_names(const struct type *a, const struct type *b)
{
	if (a->field_count != b->field_count)
		return false;
	for (int i = 0; i < a->field_count; i++)
		if (type_matching_field(b, a, i) < 0)
			return false;
	return true;
}

struct type *sema_keep_field_names(struct type *tuple, const struct type *like)
{
	for (int i = 0; i < tuple->field_count && i < like->field_count; i++)
		if (like->fields[i].name && !tuple->fields[i].name)
			tuple->fields[i].name = xstrdup(like->fields[i].name);
	return tuple;
}

/* ---- layout of definitions ---- */

/* The alignment C gives a value of this type on x86-64. */
static int type_alignment(struct type *type, int depth)
{
	if (!type || depth > 32)
		return 1;
	switch (type->kind) {
	case TYPE_INT:
		return type->size > 0 ? type->size : 1;
	case TYPE_STRING:
		return 1;
	case TYPE_ARRAY:
		return type_alignment(type->pointee, depth + 1);
	case TYPE_RECORD: {
		if (type->btf_id == TYPE_BTF_ID_SCRIPT && type->declared_align > 0)
			return type->declared_align; /* packed or aligned(N) count */
		if (type->is_incomplete)
			btf_complete_record(type);
		int alignment = 1;
		for (int i = 0; i < type->field_count; i++) {
			const struct type_field *field = &type->fields[i];
			int field_alignment = field->bitfield_bits ? field->type->size
				: type_alignment(field->type, depth + 1);
			if (field_alignment > alignment)
				alignment = field_alignment;
		}
		return alignment;
	}
	default:
		return 8;
	}
}

static int round_up(int value, int alignment)
{
	return alignment > 1 ? (value + alignment - 1) / alignment * alignment : value;
}

/* Could this expression be a constant? Definitions are checked outside
 * any probe, so nothing that needs one (variables, maps, calls) may be
 * typed there. */
static bool constant_syntax(const struct node *node, int depth)
{
	if (!node || depth > 64)
		return !node;
	switch (node->kind) {
	case NODE_INT:
	case NODE_BUILTIN:
	case NODE_POSITIONAL:
	case NODE_SIZEOF:
		return node->kind != NODE_SIZEOF || node->name;
	case NODE_UNARY:
	case NODE_BINARY:
	case NODE_TERNARY:
	case NODE_CAST:
		return (node->kind != NODE_UNARY || (node->op != OP_DEREF && node->op != OP_ADDR)) &&
		       constant_syntax(node->lhs, depth + 1) && constant_syntax(node->rhs, depth + 1) &&
		       constant_syntax(node->cond, depth + 1);
	default:
		return false;
	}
}

/* A constant integer expression of a definition (array length, bitfield
 * width, enumerator value); -1 after an error. */
static int64_t definition_constant(struct sema *sema, struct node *expr, const char *what,
				   int64_t min, int64_t max)
{
	if (!constant_syntax(expr, 0)) {
		sema_error(sema, expr->loc, "%s must be a constant integer", what);
		return -1;
	}
	sema_check_expr(sema, expr);
	if (!sema_is_int_constant(expr)) {
		if (expr->type && expr->type->kind != TYPE_NONE)
			sema_error(sema, expr->loc, "%s must be a constant integer", what);
		return -1;
	}
	int64_t value = (int64_t)expr->const_value;
	if (value < min || value > max) {
		sema_error(sema, expr->loc, "%s must be from %lld to %lld (not %lld)", what,
			 (long long)min, (long long)max, (long long)value);
		return -1;
	}
	return value;
}

static struct type *define_node(struct sema *sema, struct node *definition);

/* The type of one declared field: its base (defined in place or named),
 * stars and array lengths. NULL after an error. */
static struct type *field_type(struct sema *sema, struct node *field)
{
	struct type *type;
	char *error = NULL;
	if (field->lhs) {
		type = define_node(sema, field->lhs);
		if (!type)
			return NULL;
		for (const char *star = strchr(field->name, '*'); star; star = strchr(star + 1, '*'))
			type = type_pointer(type, false);
	} else {
		type = resolve_type(sema, field->name, true, &error);
		if (!type) {
			sema_error(sema, field->loc, "%s", error);
			free(error);
			return NULL;
		}
	}
	/* int a[2][3] is two arrays of three: build from the last length */
	int dims = ast_list_length(field->args);
	int64_t lengths[8];
	if (dims > 8) {
		sema_error(sema, field->loc, "at most 8 array dimensions");
		return NULL;
	}
	int i = 0;
	for (struct node *dim = field->args; dim; dim = dim->next) {
		lengths[i] = definition_constant(sema, dim, "an array length", 0, 1 << 20);
		if (lengths[i++] < 0)
			return NULL;
	}
	for (i = dims - 1; i >= 0; i--) {
		int64_t bytes = lengths[i] * (type->kind == TYPE_POINTER ? 8 : type->size);
		if (bytes > (1 << 24)) {
			sema_error(sema, field->loc, "'%s' is too big (over 16 MiB)",
				 field->string_value ? field->string_value : field->name);
			return NULL;
		}
		if (type->kind == TYPE_INT && type->size == 1 && type->is_signed && !type->enumeration) {
			type = type_string((int)lengths[i]); /* char arrays are strings; unsigned char ones arrays */
		} else {
			struct type *array = type_new(TYPE_ARRAY);
			array->pointee = type;
			array->array_length = (int)lengths[i];
			array->size = (int)bytes;
			type = array;
		}
	}
	if (type->kind == TYPE_RECORD && type->is_incomplete)
		btf_complete_record(type);
	return type;
}

typedef VEC(struct type_field) definition_fields;

struct layout {
	definition_fields fields;
	int bits;       /* next free bit (structs) */
	int size;       /* bytes so far */
	int alignment;
	bool is_union;
	bool is_packed; /* __attribute__((packed)) on the record: every member aligned to 1 */
};

/* The N of an aligned(N) attribute on a definition or a field: a power of
 * two; 0 when there is none, -1 after an error. */
static int attribute_alignment(struct sema *sema, struct node *node)
{
	if (!node->cond)
		return 0;
	int64_t value = definition_constant(sema, node->cond, "an alignment", 1, 1 << 28);
	if (value > 0 && (value & (value - 1)) != 0) {
		sema_error(sema, node->cond->loc, "an alignment must be a power of two (not %lld)",
			   (long long)value);
		return -1;
	}
	return (int)value;
}

/* The alignment of a member whose type alone would give `natural`: packed
 * makes it 1 unless aligned(N) names one; aligned(N) otherwise only raises
 * it, as in gcc. -1 after an error. */
static int member_alignment(struct sema *sema, const struct layout *layout, struct node *field,
			    int natural)
{
	int requested = attribute_alignment(sema, field);
	if (requested < 0)
		return -1;
	if (layout->is_packed || field->int_value)
		return requested ? requested : 1;
	return requested > natural ? requested : natural;
}

static void layout_add(struct sema *sema, struct layout *layout, struct node *field);

/* An anonymous struct or union member: its fields join the parent's at
 * its own offset. */
static void layout_add_anonymous(struct sema *sema, struct layout *layout, struct node *field)
{
	struct type *inner = define_node(sema, field->lhs);
	if (!inner || inner->kind != TYPE_RECORD)
		return;
	int alignment = member_alignment(sema, layout, field, type_alignment(inner, 0));
	if (alignment < 0)
		return;
	int offset = layout->is_union ? 0 : round_up((layout->bits + 7) / 8, alignment);
	for (int i = 0; i < inner->field_count; i++) {
		struct type_field copy = inner->fields[i];
		copy.name = xstrdup(copy.name);
		copy.offset += offset;
		vec_push(&layout->fields, copy);
	}
	if (!layout->is_union)
		layout->bits = (offset + inner->size) * 8;
	if (offset + inner->size > layout->size)
		layout->size = offset + inner->size;
	if (alignment > layout->alignment)
		layout->alignment = alignment;
}

static void layout_add(struct sema *sema, struct layout *layout, struct node *field)
{
	if (!field->string_value && !field->rhs) {
		layout_add_anonymous(sema, layout, field);
		return;
	}
	struct type *type = field_type(sema, field);
	if (!type)
		return;
	for (int i = 0; i < layout->fields.count; i++) {
		if (field->string_value && strcmp(layout->fields.items[i].name, field->string_value) == 0) {
			sema_error(sema, field->loc, "duplicate field '%s'", field->string_value);
			return;
		}
	}
	struct type_field out = { .type = type };
	if (field->rhs) {
		if (type->kind != TYPE_INT) {
			sema_error(sema, field->loc, "a bitfield must have an integer type, not %s",
				 type_name(type));
			return;
		}
		int unit_bits = type->size * 8;
		int64_t width = definition_constant(sema, field->rhs, "a bitfield width",
						    field->string_value ? 1 : 0, unit_bits);
		if (width < 0)
			return;
		if (field->cond) {
			sema_error(sema, field->cond->loc, "aligned() on a bitfield is not supported");
			return;
		}
		bool is_packed = layout->is_packed || field->int_value;
		int start = layout->is_union ? 0 : layout->bits;
		if (width == 0) { /* `int : 0` closes the current unit */
			layout->bits = round_up(start, unit_bits);
			return;
		}
		if (!is_packed && start / unit_bits != (start + (int)width - 1) / unit_bits)
			start = round_up(start, unit_bits);
		if (!is_packed && type->size > layout->alignment)
			layout->alignment = type->size;
		int end_bytes = (start + (int)width + 7) / 8;
		if (!layout->is_union)
			layout->bits = start + (int)width;
		if (end_bytes > layout->size)
			layout->size = end_bytes;
		if (!field->string_value)
			return; /* unnamed padding bits */
		if (is_packed && start % 8 + width > 64) {
			sema_error(sema, field->loc, "packed bitfield '%s' spans 9 bytes: sonde reads "
				   "at most 8", field->string_value);
			return;
		}
		/* packed: from the byte it starts in (it may straddle its type's units) */
		out.offset = is_packed ? start / 8 : start / unit_bits * type->size;
		out.bitfield_bits = (int)width;
		out.bitfield_offset = start - out.offset * 8;
	} else {
		int alignment = member_alignment(sema, layout, field, type_alignment(type, 0));
		int size = type->kind == TYPE_POINTER ? 8 : type->size;
		if (alignment < 0)
			return;
		if (type->kind == TYPE_RECORD && size == 0 && !type->field_count) {
			sema_error(sema, field->loc, "field '%s' has an incomplete type: %s is not defined",
				 field->string_value, type_name(type));
			return;
		}
		out.offset = layout->is_union ? 0 : round_up((layout->bits + 7) / 8, alignment);
		if (!layout->is_union)
			layout->bits = (out.offset + size) * 8;
		if (out.offset + size > layout->size)
			layout->size = out.offset + size;
		if (alignment > layout->alignment)
			layout->alignment = alignment;
	}
	out.name = xstrdup(field->string_value);
	vec_push(&layout->fields, out);
}

/* Registers name (unless anonymous) and returns its entry's index, or -1
 * after reporting a second definition. */
static int register_name(struct sema *sema, struct node *at, const char *name, struct type *type)
{
	struct script_types *table = sema->script_types;
	if (script_type_find(sema, name)) {
		sema_error(sema, at->loc, "'%s' is defined twice", name);
		return -1;
	}
	struct script_type entry = { .name = xstrdup(name), .type = type };
	vec_push(&table->types, entry);
	return table->types.count - 1;
}

static bool is_anonymous(const char *spelling)
{
	return !strchr(spelling, ' ');
}

static struct type *define_record(struct sema *sema, struct node *definition)
{
	struct type *record = type_new(TYPE_RECORD);
	record->record_name = xstrdup(definition->name);
	record->is_union = strncmp(definition->name, "union", 5) == 0;
	record->btf_id = TYPE_BTF_ID_SCRIPT; /* printed and checked like a kernel struct */
	int entry = -1;
	if (!is_anonymous(definition->name)) {
		entry = register_name(sema, definition, definition->name, record);
		if (entry < 0)
			return NULL;
		sema->script_types->types.items[entry].is_defining = true;
	}
	struct layout layout = { .alignment = 1, .is_union = record->is_union,
				 .is_packed = definition->int_value != 0 };
	for (struct node *field = definition->args; field; field = field->next)
		layout_add(sema, &layout, field);
	if (entry >= 0)
		sema->script_types->types.items[entry].is_defining = false;
	int requested = attribute_alignment(sema, definition);
	if (requested > layout.alignment)
		layout.alignment = requested;
	record->fields = layout.fields.items;
	record->field_count = layout.fields.count;
	record->size = round_up(layout.is_union ? layout.size : (layout.bits + 7) / 8, layout.alignment);
	record->declared_align = layout.alignment;
	return record;
}

static struct type *define_enum(struct sema *sema, struct node *definition)
{
	struct type_enum *enumeration = type_enum_new(definition->name);
	/* made first: a later enumerator's value may name an earlier one */
	struct type *constant_type = type_enum_int(enumeration, 8);
	int64_t next = 0, lowest = 0, highest = 0;
	if (definition->cond) {
		sema_error(sema, definition->cond->loc, "aligned() on an enum is not supported");
		return NULL;
	}
	for (struct node *item = definition->args; item; item = item->next) {
		if (item->lhs) {
			if (constant_syntax(item->lhs, 0))
				sema_check_expr(sema, item->lhs);
			if (!constant_syntax(item->lhs, 0) || !sema_is_int_constant(item->lhs)) {
				if (!item->lhs->type || item->lhs->type->kind != TYPE_NONE)
					sema_error(sema, item->lhs->loc, "the value of %s must be a constant "
						   "integer", item->name);
				return NULL;
			}
			next = (int64_t)item->lhs->const_value;
		}
		int64_t value;
		struct type *ignored;
		if (sema_enumerator(sema, item->name, &value, &ignored)) {
			sema_error(sema, item->loc, "enumerator '%s' is defined twice", item->name);
			return NULL;
		}
		type_enum_add(enumeration, item->name, next);
		struct script_enumerator entry = { .name = xstrdup(item->name), .value = next,
						   .type = constant_type };
		vec_push(&sema->script_types->enumerators, entry);
		if (next < lowest)
			lowest = next;
		if (next > highest)
			highest = next;
		next++;
	}
	/* a field or a value of the enum type itself is a C int; a packed
	 * enum the smallest integer holding every value, as gcc makes it */
	int size = 4;
	if (definition->int_value) {
		for (size = 1; size < 8; size *= 2) {
			int bits = size * 8;
			bool fits = lowest < 0 ? lowest >= -(1LL << (bits - 1)) && highest < (1LL << (bits - 1))
					       : (uint64_t)highest < (1ULL << bits);
			if (fits)
				break;
		}
	}
	struct type *type = type_enum_int(enumeration, size);
	constant_type->is_signed = type->is_signed;
	if (!is_anonymous(definition->name) && register_name(sema, definition, definition->name, type) < 0)
		return NULL;
	return type;
}

static struct type *define_node(struct sema *sema, struct node *definition)
{
	switch (definition->kind) {
	case NODE_C_RECORD:
		return define_record(sema, definition);
	case NODE_C_ENUM:
		return define_enum(sema, definition);
	case NODE_C_TYPEDEF: {
		struct node *field = definition->lhs;
		struct type *type = field_type(sema, field);
		if (!type)
			return NULL;
		if (parse_int_type_name(field->string_value)) {
			sema_error(sema, field->loc, "'%s' is a built-in type name", field->string_value);
			return NULL;
		}
		register_name(sema, field, field->string_value, type);
		return type;
	}
	default:
		return NULL;
	}
}

int sema_define_types(struct sema *sema, struct node *definitions)
{
	int errors = sema->error_count;
	if (!sema->script_types)
		sema->script_types = xcalloc(1, sizeof(*sema->script_types));
	for (struct node *definition = definitions; definition; definition = definition->next)
		define_node(sema, definition);
	return sema->error_count > errors ? -1 : 0;
}

void sema_types_free(struct sema *sema)
{
	struct script_types *table = sema->script_types;
	if (!table)
		return;
	for (int i = 0; i < table->types.count; i++)
		free(table->types.items[i].name);
	free(table->types.items);
	for (int i = 0; i < table->enumerators.count; i++)
		free(table->enumerators.items[i].name);
	free(table->enumerators.items);
	free(table);
	sema->script_types = NULL;
}
