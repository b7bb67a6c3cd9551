/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Semantic analysis: turns the parser's tree into a typed tree.
 *
 * It receives the AST and does three things:
 *  1. expands every probe spec through its provider (wildcards included) and
 *     asks the provider what each point offers (typed args, argN, retval);
 *  2. infers a type for every expression, scratch variable and map, and
 *     checks each use against it (C's integer rules, all arithmetic in 64
 *     bits; strings; tuples; aggregations only as map values);
 *  3. records what the runtime will need: a map_desc for every map and an
 *     event_desc for every call that sends a ring-buffer record.
 *
 * Maps may be used before the statement that gives them a type (a probe may
 * read @x that a later probe writes), so the whole program is checked twice:
 * a silent first pass settles map types, the second reports errors.
 * Types of `args` differ between the points of one wildcard probe; codegen
 * re-types a block for each point through sema_retype_for_point.
 */
#include "sema_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../aggregations/aggregation.h"
#include "../common/names.h"
#include "../common/printf_format.h"
#include "../kernel/btf.h"
#include "builtins/builtins.h"

#define MAX_MAP_ENTRIES 4096 /* bpftrace's default too; SONDE_MAX_MAP_ENTRIES overrides */

static void check_stmts(struct sema *sema, struct node *list);
static void check_tuple_index(struct sema *sema, struct node *node);
static void check_block(struct sema *sema, struct node *list);

void sema_error(struct sema *sema, struct src_loc loc, const char *fmt, ...)
{
	sema->error_count++;
	if (!sema->report)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *message = NULL;
	if (vasprintf(&message, fmt, ap) < 0)
		message = NULL;
	va_end(ap);
	diag_error(sema->diag, loc, "%s", message ? message : fmt);
	free(message);
}

bool sema_is_int(const struct node *node)
{
	return node->type && type_is_integer_like(node->type);
}

bool sema_is_string(const struct node *node)
{
	return node->type && node->type->kind == TYPE_STRING;
}

/* ---- maps ---- */

/* A tool's size for this map, else SONDE_MAX_MAP_ENTRIES (parsed, and
 * refused when malformed, by main.c), else bpftrace's default. */
static void size_map(const struct sema *sema, struct map_desc *map)
{
	const struct map_size *size = compile_options_map_size(sema->options, map->name);
	if (size) {
		map->max_entries = size->entries;
		map->sized_by = xstrdup(size->option);
		return;
	}
	map->max_entries = sema->options->max_map_entries ? sema->options->max_map_entries
							  : MAX_MAP_ENTRIES;
	map->sized_by = xstrdup("SONDE_MAX_MAP_ENTRIES");
}

struct map_desc *sema_map_for(struct sema *sema, struct node *map_node)
{
	struct program *program = sema->program;
	for (int i = 0; i < program->maps.count; i++) {
		struct map_desc *map = &program->maps.items[i];
		if (map->role == MAP_ROLE_USER && strcmp(map->name, map_node->name) == 0) {
			map_node->map_id = i;
			return map;
		}
	}
	struct map_desc map = {
		.id = program->maps.count,
		.name = xstrdup(map_node->name),
		.role = MAP_ROLE_USER,
		.fd = -1,
	};
	size_map(sema, &map);
	vec_push(&program->maps, map);
	while (sema->map_uses.count <= map.id)
		vec_push(&sema->map_uses, ((struct map_use){ .first = map_node->loc }));
	map_node->map_id = map.id;
	return &program->maps.items[map.id];
}

struct type *sema_merge_types(struct type *a, struct type *b)
{
	if (!a || a->kind == TYPE_NONE)
		return b;
	if (!b || b->kind == TYPE_NONE)
		return a;
	if (type_is_integer_like(a) && type_is_integer_like(b)) {
		if (type_equal(a, b))
			return a;
		return type_int(8, a->kind == TYPE_INT ? a->is_signed : true);
	}
	if (a->kind != b->kind)
		return NULL;
	if (a->kind == TYPE_STRING)
		return a->size >= b->size ? a : b;
	if (a->kind == TYPE_TUPLE) {
		if (a->field_count != b->field_count || !sema_same_field_names(a, b))
			return NULL;
		if (type_equal(a, b))
			return a; /* keeps its declared (bpftrace) size */
		/* a record given its fields in another order keeps a's order */
		struct type **elements = xcalloc(a->field_count, sizeof(*elements));
		for (int i = 0; i < a->field_count; i++) {
			elements[i] = sema_merge_types(a->fields[i].type,
						       b->fields[type_matching_field(b, a, i)].type);
			if (!elements[i]) {
				free(elements);
				return NULL;
			}
		}
		struct type *merged = sema_keep_field_names(type_tuple(elements, a->field_count), a);
		free(elements);
		return merged;
	}
	return type_equal(a, b) ? a : NULL;
}

/* The key type a map access implies: none, one key, or a tuple of keys. */
static struct type *key_type_of(struct node *map_node, bool *is_multi)
{
	int count = ast_list_length(map_node->args);
	*is_multi = count > 1;
	if (count == 0)
		return NULL;
	if (count == 1) {
		struct type *type = map_node->args->type;
		if (type && type->kind == TYPE_INT)
			return type_widened(type);
		return type;
	}
	struct type **elements = xcalloc(count, sizeof(*elements));
	int i = 0;
	for (struct node *key = map_node->args; key; key = key->next) {
		struct type *type = key->type;
		elements[i++] = type && type->kind == TYPE_INT ? type_widened(type) : type;
	}
	struct type *tuple = type_tuple(elements, count);
	free(elements);
	return tuple;
}

static const char *describe_key(const struct map_desc *map)
{
	if (!map->key_type)
		return "no key";
	return type_name(map->key_type);
}

/* What each key expression is called where a name is needed (sonde serve's
 * labels): a builtin's own name, NULL for anything else. */
static void record_key_names(struct map_desc *map, const struct node *map_node)
{
	int count = ast_list_length(map_node->args), i = 0;

	if (map->key_names || count == 0)
		return;
	map->key_names = xcalloc((size_t)count, sizeof(*map->key_names));
	map->key_name_count = count;
	for (const struct node *key = map_node->args; key; key = key->next, i++)
		if (key->kind == NODE_BUILTIN)
			map->key_names[i] = xstrdup(key->name);
}

/* Checks the keys of a map access and records the key type. */
struct map_desc *sema_check_map_access(struct sema *sema, struct node *map_node)
{
	for (struct node *key = map_node->args; key; key = key->next) {
		sema_check_expr(sema, key);
		if (key->type && (key->type->kind == TYPE_VOID || type_is_aggregation(key->type) ||
				  key->type->kind == TYPE_RECORD)) {
			sema_error(sema, key->loc, "%s cannot be used as a map key",
				 type_name(key->type));
			return NULL;
		}
		if (key->type && key->type->kind == TYPE_NONE)
			return NULL;
	}
	struct map_desc *map = sema_map_for(sema, map_node);
	bool is_multi = false;
	struct type *key_type = key_type_of(map_node, &is_multi);
	bool had_use = map->key_type != NULL || map->value_type != NULL;
	if (!map->key_type && !had_use) {
		map->key_type = key_type;
		map->key_is_multi = is_multi;
		record_key_names(map, map_node);
	} else if (!map->key_type && key_type && map->value_type) {
		sema_error(sema, map_node->loc, "map %s is used without a key elsewhere; here it has key %s",
			 map->name, type_name(key_type));
		return NULL;
	} else if (map->key_type && !key_type) {
		sema_error(sema, map_node->loc, "map %s needs a key of type %s", map->name,
			 describe_key(map));
		return NULL;
	} else if (map->key_type && key_type) {
		struct type *merged = sema_merge_types(map->key_type, key_type);
		if (!merged || map->key_is_multi != is_multi) {
			sema_error(sema, map_node->loc,
				 "map %s is keyed by %s elsewhere; here the key is %s", map->name,
				 describe_key(map), type_name(key_type));
			return NULL;
		}
		map->key_type = merged;
	}
	return map;
}

static void set_map_value(struct sema *sema, struct node *map_node, struct map_desc *map,
			  struct type *value_type)
{
	if (!value_type || value_type->kind == TYPE_NONE)
		return;
	if (value_type->kind == TYPE_VOID) {
		sema_error(sema, map_node->loc, "cannot store a value of type void in map %s", map->name);
		return;
	}
	if (!map->value_type) {
		map->value_type = value_type;
		return;
	}
	if (type_is_aggregation(map->value_type) || type_is_aggregation(value_type)) {
		if (map->value_type->kind != value_type->kind ||
		    !type_equal(map->value_type, value_type)) {
			sema_error(sema, map_node->loc,
				 "map %s holds %s elsewhere; it cannot also hold %s", map->name,
				 type_name(map->value_type), type_name(value_type));
		}
		return;
	}
	struct type *merged = sema_merge_types(map->value_type, value_type);
	if (!merged) {
		sema_error(sema, map_node->loc,
			 "map %s holds %s elsewhere; it cannot also hold %s", map->name,
			 type_name(map->value_type), type_name(value_type));
		return;
	}
	map->value_type = merged;
}

/* ---- identifiers: builtin variables and constants ---- */

/* Kernel-internal #defines that bpftrace's tools use and that no header on
 * a machine without kernel sources provides (bpftrace finds them through
 * clang and the kernel headers). Their values are part of the kernel ABI. */
static const struct { const char *name; int64_t value; } kernel_constants[] = {
	{ "TASK_RUNNING", 0 }, { "TASK_INTERRUPTIBLE", 1 }, { "TASK_UNINTERRUPTIBLE", 2 },
	{ "__TASK_STOPPED", 4 }, { "__TASK_TRACED", 8 }, { "EXIT_DEAD", 16 }, { "EXIT_ZOMBIE", 32 },
	{ "TASK_PARKED", 64 }, { "TASK_DEAD", 128 }, { "TASK_WAKEKILL", 256 },
	{ "TASK_WAKING", 512 }, { "TASK_NOLOAD", 1024 }, { "TASK_NEW", 2048 },
};

/* An identifier that is not a builtin: a #define from the script or its
 * headers, a kernel enum constant from BTF, or a kernel-internal constant. */
static bool lookup_constant(struct sema *sema, const char *name, int64_t *value, struct type **type)
{
	const struct macro *macro = sema->macros ? macro_find(sema->macros, name) : NULL;
	if (macro && macro->has_value) {
		*value = macro->value;
		return true;
	}
	for (size_t i = 0; i < sizeof(kernel_constants) / sizeof(kernel_constants[0]); i++) {
		if (strcmp(kernel_constants[i].name, name) == 0) {
			*value = kernel_constants[i].value;
			return true;
		}
	}
	/* only names that look like constants: an identifier typo should not
	 * scan the whole kernel type table */
	bool looks_constant = true;
	for (const char *p = name; *p && looks_constant; p++)
		looks_constant = (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_';
	return looks_constant && btf_available() && btf_enum_constant(name, value, type) == 0;
}

static void check_builtin(struct sema *sema, struct node *node)
{
	const char *name = node->name;
	const struct variable_def *variable = variable_lookup(name, &node->int_value);
	if (variable) {
		node->variable = variable;
		if (variable->needs && (!sema->point || !(sema->point->features & variable->needs))) {
			sema_error(sema, node->loc, "%s is not available for probe %s", name,
				   sema->point ? sema->point->name : "");
			node->type = type_none();
			return;
		}
		variable->check(sema, node);
		return;
	}
	int64_t constant;
	struct type *enum_type;
	if (sema_enumerator(sema, name, &constant, &enum_type)) {
		node->type = enum_type;
		node->is_constant = true;
		node->const_value = (uint64_t)constant;
		return;
	}
	enum_type = NULL;
	if (lookup_constant(sema, name, &constant, &enum_type)) {
		/* a kernel enum's constant keeps its enum, so it prints by name */
		node->type = enum_type ? enum_type : type_int(8, true);
		node->is_constant = true;
		node->const_value = (uint64_t)constant;
		return;
	}
	sema_error(sema, node->loc, "unknown identifier '%s'", name);
	node->type = type_none();
}

/* ---- fields ---- */

/* Fields of a record, converting lazily loaded kernel structs first. */
static struct type_field *record_field(struct type *record, const char *name)
{
	if (record->is_incomplete)
		btf_complete_record(record);
	for (int i = 0; i < record->field_count; i++)
		if (record->fields[i].name && strcmp(record->fields[i].name, name) == 0)
			return &record->fields[i];
	return NULL;
}

/* ---- expressions ---- */

static int64_t positional_int(struct sema *sema, struct node *node, bool *is_number)
{
	int index = (int)node->int_value;
	*is_number = false;
	if (index < 1 || index > sema->options->positional_count)
		return 0;
	const char *text = sema->options->positional[index - 1];
	char *end;
	errno = 0;
	long long value = strtoll(text, &end, 0);
	if (*text && !*end && errno == 0) {
		*is_number = true;
		return value;
	}
	return 0;
}

static void check_positional(struct sema *sema, struct node *node)
{
	bool is_number;
	int index = (int)node->int_value;
	int64_t value = positional_int(sema, node, &is_number);
	node->is_constant = true;
	if (index < 1) {
		sema_error(sema, node->loc, "$%d is not a positional parameter: they are numbered from $1",
			 index);
		node->type = type_none();
		return;
	}
	if (index > sema->options->positional_count) {
		/* bpftrace treats a missing positional parameter as 0 / "" */
		node->type = type_int(8, true);
		node->const_value = 0;
		return;
	}
	if (is_number) {
		node->type = type_int(8, true);
		node->const_value = (uint64_t)value;
	} else {
		sema_error(sema, node->loc, "$%d is '%s', not a number; use str($%d) for text", index,
			 sema->options->positional[index - 1], index);
		node->type = type_none();
	}
}

static void check_field(struct sema *sema, struct node *node)
{
	sema_check_expr(sema, node->lhs);
	struct type *base = node->lhs->type;
	node->type = type_none();
	if (!base || base->kind == TYPE_NONE)
		return;
	if (node->lhs->kind == NODE_BUILTIN && node->lhs->variable && node->lhs->variable->points_to) {
		base = node->lhs->variable->points_to();
		if (!base) {
			sema_error(sema, node->lhs->loc, "%s->%s needs the kernel's BTF type information, "
				 "which this kernel does not provide", node->lhs->name, node->name);
			return;
		}
		node->lhs->type = base;
	}
	int record = base->kind == TYPE_TUPLE ? sema_record_field_index(sema, node) : 0;
	if (record > 0)
		check_tuple_index(sema, node); /* $r.a is $r.N for a's N */
	if (record != 0)
		return;
	/* both p->f and p.f work on a pointer to a struct, as in current bpftrace */
	if (base->kind == TYPE_POINTER && base->pointee && base->pointee->kind == TYPE_RECORD)
		base = base->pointee;
	else if (node->is_arrow && base->kind == TYPE_RECORD && node->lhs->kind != NODE_BUILTIN &&
		 base->btf_id) {
		sema_error(sema, node->loc, "'->' needs a pointer; %s is a struct, use '.'", type_name(base));
		return;
	}
	if (base->kind != TYPE_RECORD) {
		sema_error(sema, node->loc, "%s has no fields (it is %s)",
			 node->lhs->kind == NODE_BUILTIN ? node->lhs->name : "this expression",
			 type_name(base));
		return;
	}
	struct type_field *field = record_field(base, node->name);
	if (field) {
		node->type = sema_user_pointer_if(field->type, node);
		/* long char arrays are read up to the string limit */
		if (field->type->kind == TYPE_STRING && field->type->size > sema->options->max_strlen &&
		    !field->type->is_data_loc)
			node->type = type_string(sema->options->max_strlen);
		return;
	}
	if (base->btf_id)
		sema_error(sema, node->loc, "%s has no field named '%s'", type_name(base), node->name);
	else
		sema_error(sema, node->loc, "%s has no field named '%s'",
			 sema->point ? sema->point->name : "args", node->name);
}

/* p[i] on a pointer, or a[i] on an array field */
static void check_index(struct sema *sema, struct node *node)
{
	sema_check_expr(sema, node->lhs);
	sema_check_expr(sema, node->rhs);
	node->type = type_none();
	struct type *base = node->lhs->type;
	if (!base || base->kind == TYPE_NONE || !node->rhs->type || node->rhs->type->kind == TYPE_NONE)
		return;
	if (!sema_is_int(node->rhs)) {
		sema_error(sema, node->rhs->loc, "an index must be an integer, not %s", type_name(node->rhs->type));
		return;
	}
	if (base->kind == TYPE_ARRAY && base->array_length > 0 && node->rhs->is_constant &&
	    node->rhs->const_value >= (uint64_t)base->array_length) {
		sema_error(sema, node->rhs->loc, "index %lld is out of bounds for %s",
			 (long long)node->rhs->const_value, type_name(base));
		return;
	}
	if ((base->kind == TYPE_POINTER || base->kind == TYPE_ARRAY) && base->pointee) {
		node->type = sema_user_pointer_if(base->pointee, node);
		return;
	}
	if (base->kind == TYPE_POINTER)
		node->type = type_int(1, false);
	else
		sema_error(sema, node->loc, "cannot index %s", type_name(base));
}

static void check_tuple_index(struct sema *sema, struct node *node)
{
	sema_check_expr(sema, node->lhs);
	struct type *base = node->lhs->type;
	node->type = type_none();
	if (!base || base->kind == TYPE_NONE)
		return;
	if (base->kind != TYPE_TUPLE) {
		sema_error(sema, node->loc, "only tuples can be indexed with .N; this is %s",
			 type_name(base));
		return;
	}
	if (node->int_value >= (uint64_t)base->field_count) {
		sema_error(sema, node->loc, "tuple index %llu is out of range: the tuple has %d elements",
			 (unsigned long long)node->int_value, base->field_count);
		return;
	}
	node->type = base->fields[node->int_value].type;
}

/* Size and alignment of a value laid out as bpftrace lays out tuples. */
static int declared_layout(const struct type *type, int *align)
{
	switch (type->kind) {
	case TYPE_INT:
	case TYPE_POINTER:
		*align = type->size;
		return type->size;
	case TYPE_STRING:
	case TYPE_BUFFER:
		*align = 1;
		return type->size;
	case TYPE_TUPLE:
		*align = type->declared_size ? type->declared_align : 8;
		return type->declared_size ? type->declared_size : type->size;
	default:
		*align = 8;
		return type->size;
	}
}

static void check_tuple(struct sema *sema, struct node *node)
{
	int count = ast_list_length(node->args);
	struct type **elements = xcalloc(count, sizeof(*elements));
	int i = 0, declared = 0, declared_align = 1;
	bool ok = true;
	for (struct node *element = node->args; element; element = element->next) {
		sema_check_expr(sema, element);
		struct type *type = element->type;
		if (!type || type->kind == TYPE_NONE) {
			ok = false;
		} else if (type->kind == TYPE_VOID || type_is_aggregation(type) ||
			   type->kind == TYPE_RECORD) {
			sema_error(sema, element->loc, "%s cannot be part of a tuple", type_name(type));
			ok = false;
		}
		elements[i++] = type && type->kind == TYPE_INT ? type_widened(type) : type;
		if (ok) {
			int align, size = declared_layout(type, &align);
			declared = (declared + align - 1) / align * align + size;
			if (align > declared_align)
				declared_align = align;
		}
	}
	node->type = ok ? type_tuple(elements, count) : type_none();
	if (ok) {
		node->type->declared_align = declared_align;
		node->type->declared_size = (declared + declared_align - 1) / declared_align * declared_align;
	}
	free(elements);
	if (ok && node->rhs)
		sema_name_record_fields(sema, node);
}

static void check_call(struct sema *sema, struct node *node)
{
	const struct function_def *def = function_lookup(node->name);
	node->type = type_none();
	if (!def) {
		sema_error(sema, node->loc, "unknown function '%s'", node->name);
		return;
	}
	node->function = def;
	int count = ast_list_length(node->args);
	if (count < def->min_args || (def->max_args >= 0 && count > def->max_args)) {
		if (def->min_args == def->max_args)
			sema_error(sema, node->loc, "%s() takes %d argument%s, %d given", def->name,
				 def->min_args, def->min_args == 1 ? "" : "s", count);
		else if (def->max_args < 0)
			sema_error(sema, node->loc, "%s() takes at least %d argument%s, %d given",
				 def->name, def->min_args, def->min_args == 1 ? "" : "s", count);
		else
			sema_error(sema, node->loc, "%s() takes %d to %d arguments, %d given", def->name,
				 def->min_args, def->max_args, count);
		return;
	}
	if (def->needs_unsafe && !sema->options->unsafe) {
		sema_error(sema, node->loc, "%s() is unsafe: run sonde with --unsafe to allow it",
			 def->name);
		return;
	}
	def->check(sema, node);
}

static void check_map_read(struct sema *sema, struct node *node)
{
	struct map_desc *map = sema_check_map_access(sema, node);
	node->type = type_none();
	if (!map)
		return;
	if (!map->value_type) {
		if (sema->map_uses.items[map->id].assigned) {
			/* its assignment's value had an error, reported there */
		} else if (sema->report && sema->skipped_blocks) {
			/* its writer was in a skipped block: the map just stays empty */
			diag_warning(sema->diag, node->loc, "map %s is only assigned in skipped probes; "
				     "it stays empty", map->name);
			map->value_type = type_int(8, true);
			node->type = map->value_type;
		} else if (sema->report) {
			sema_error(sema, node->loc, "map %s is read but never assigned", map->name);
		}
		return;
	}
	if (type_is_aggregation(map->value_type) && map->value_type->aggregation->read) {
		/* read as the combined value of every CPU's share */
		node->type = type_int(8, map->value_type->is_signed);
		return;
	}
	if (type_is_aggregation(map->value_type)) {
		sema_error(sema, node->loc, "the value of %s (%s) can only be printed, not used in an expression",
			 map->name, type_name(map->value_type));
		return;
	}
	node->type = map->value_type;
}

void sema_check_expr(struct sema *sema, struct node *node)
{
	switch (node->kind) {
	case NODE_INT:
		node->const_value = node->int_value;
		node->type = node->name ? type_bool()
			     : node->int_value > INT64_MAX ? type_int(8, false) : type_int(8, true);
		node->is_constant = true;
		break;
	case NODE_STRING:
		node->type = type_string(node->string_length + 1);
		node->is_constant = true;
		break;
	case NODE_BUILTIN:
		check_builtin(sema, node);
		break;
	case NODE_POSITIONAL:
		check_positional(sema, node);
		break;
	case NODE_POSITIONAL_COUNT:
		node->type = type_int(8, true);
		node->const_value = sema->options->positional_count;
		node->is_constant = true;
		break;
	case NODE_VAR: {
		if (!sema->probe) {
			/* a map declaration's size, before any probe */
			sema_error(sema, node->loc, "$%s cannot be used here: scratch variables "
				   "exist only inside a probe", node->name);
			node->type = type_none();
			break;
		}
		struct var_info *info = sema_var_find(sema, node->name);
		if (!info && sema_var_was_declared(sema, node->name)) {
			sema_error(sema, node->loc, "$%s is not in scope here: it was declared with let "
				   "inside a block that has ended; declare it before the block (let $%s;)",
				   node->name, node->name);
			node->type = type_none();
			break;
		}
		if (!info) {
			sema_error(sema, node->loc, "$%s is used before it is assigned", node->name);
			node->type = type_none();
			break;
		}
		if (!info->type || info->type->kind == TYPE_NONE) {
			sema_error(sema, node->loc, "$%s is declared but has no value yet (its type is "
				   "set by its first assignment)", node->name);
			node->type = type_none();
			break;
		}
		node->var_id = (int)(info - sema->probe->vars.items);
		node->type = info->type;
		break;
	}
	case NODE_MAP:
		check_map_read(sema, node);
		break;
	case NODE_CALL:
		check_call(sema, node);
		break;
	case NODE_BINARY:
		sema_check_binary(sema, node);
		break;
	case NODE_UNARY:
		sema_check_unary(sema, node);
		break;
	case NODE_INCDEC:
		if (node->lhs->kind != NODE_VAR && node->lhs->kind != NODE_MAP) {
			sema_error(sema, node->loc, "'%s' needs a $variable or @map", op_spelling(node->op));
			node->type = type_none();
			break;
		}
		if (node->lhs->kind == NODE_MAP) {
			struct map_desc *map = sema_check_map_access(sema, node->lhs);
			if (map) {
				set_map_value(sema, node->lhs, map, type_int(8, true));
				node->lhs->type = map->value_type;
			}
		} else {
			sema_var_default_int(sema, node->lhs);
			sema_check_expr(sema, node->lhs);
		}
		if (node->lhs->type && node->lhs->type->kind != TYPE_NONE && !sema_is_int(node->lhs))
			sema_error(sema, node->loc, "'%s' needs an integer, not %s", op_spelling(node->op),
				 type_name(node->lhs->type));
		/* a pointer steps by whole elements (codegen) and stays a pointer */
		node->type = node->lhs->type && node->lhs->type->kind == TYPE_POINTER ? node->lhs->type
										: type_int(8, true);
		break;
	case NODE_TERNARY:
		sema_check_expr(sema, node->cond);
		sema_check_expr(sema, node->lhs);
		sema_check_expr(sema, node->rhs);
		if (node->cond->type && node->cond->type->kind != TYPE_NONE && !sema_is_int(node->cond))
			sema_error(sema, node->cond->loc, "condition must be an integer, not %s",
				 type_name(node->cond->type));
		node->type = sema_merge_types(node->lhs->type, node->rhs->type);
		if (!node->type) {
			sema_error(sema, node->loc, "both branches of %s must have the same type (%s vs %s)",
				 node->name ? "an if used as a value" : "'?:'",
				 type_name(node->lhs->type), type_name(node->rhs->type));
			node->type = type_none();
		}
		break;
	case NODE_BLOCK_EXPR: {
		/* { statements; value }: what the statements declare ends here */
		int mark = sema_scope_open(sema);
		check_stmts(sema, node->body);
		sema_check_expr(sema, node->lhs);
		sema_scope_close(sema, mark);
		node->type = node->lhs->type;
		node->is_constant = !node->body && node->lhs->is_constant;
		node->const_value = node->lhs->const_value;
		break;
	}
	case NODE_FIELD:
		check_field(sema, node);
		break;
	case NODE_TUPLE_INDEX:
		check_tuple_index(sema, node);
		break;
	case NODE_INDEX:
		check_index(sema, node);
		break;
	case NODE_CAST:
		sema_check_cast(sema, node);
		break;
	case NODE_TUPLE:
		check_tuple(sema, node);
		break;
	case NODE_SIZEOF: {
		node->is_constant = true;
		node->type = type_int(8, false);
		if (node->name) {
			char *error = NULL;
			struct type *type = sema_resolve_type(sema, node->name, &error);
			if (!type) {
				sema_error(sema, node->loc, "%s", error);
				free(error);
				break;
			}
			node->const_value = type->size;
		} else if (node->lhs->kind == NODE_BUILTIN && sema_plain_type_name(sema, node->lhs->name)) {
			/* sizeof(pid_t) style: the parser cannot tell a type name from an identifier */
			node->const_value = sema_plain_type_name(sema, node->lhs->name)->size;
		} else {
			sema_check_expr(sema, node->lhs);
			int align;
			node->const_value = node->lhs->type ? (uint64_t)declared_layout(node->lhs->type, &align) : 0;
		}
		break;
	}
	case NODE_OFFSETOF: {
		/* offsetof(struct foo, a.b): walk the field path through nested structs */
		node->type = type_int(8, false);
		node->is_constant = true;
		char *error = NULL;
		struct type *type = sema_resolve_type(sema, node->name, &error);
		if (!type) {
			sema_error(sema, node->loc, "%s", error);
			free(error);
			break;
		}
		uint64_t offset = 0;
		char *path = xstrdup(node->string_value ? node->string_value : "");
		for (char *part = strtok(path, "."); part; part = strtok(NULL, ".")) {
			struct type_field *field = type->kind == TYPE_RECORD ? record_field(type, part) : NULL;
			if (!field) {
				sema_error(sema, node->loc, "%s has no field named '%s'", type_name(type), part);
				break;
			}
			offset += field->offset;
			type = field->type;
		}
		free(path);
		node->const_value = offset;
		break;
	}
	default:
		sema_error(sema, node->loc, "this is a statement, not an expression");
		node->type = type_none();
		break;
	}
}

/* ---- statements ---- */

static void check_assign(struct sema *sema, struct node *node)
{
	struct node *target = node->lhs;
	struct type *declared = NULL;
	if (node->name) { /* let $x: TYPE [= value] */
		declared = parse_int_type_name(node->name);
		if (!declared) {
			sema_error(sema, node->loc, "unknown type '%s' in declaration of $%s", node->name,
				 target->name);
			return;
		}
	}
	if (!node->rhs) { /* `let $x;`: a new variable, typed by its first assignment */
		struct var_info *info = sema_var_declare(sema, target->name, declared ? declared : type_none());
		info->is_typed = declared != NULL;
		target->var_id = (int)(info - sema->probe->vars.items);
		target->type = info->type;
		return;
	}
	if (declared) {
		sema_check_expr(sema, node->rhs);
		if (node->rhs->type && node->rhs->type->kind != TYPE_NONE && !sema_is_int(node->rhs)) {
			sema_error(sema, node->rhs->loc, "$%s is declared %s but assigned %s", target->name,
				 node->name, type_name(node->rhs->type));
			return;
		}
		struct var_info *info = sema_var_declare(sema, target->name, declared);
		info->is_typed = true;
		target->var_id = (int)(info - sema->probe->vars.items);
		target->type = info->type;
		return;
	}
	sema_check_expr(sema, node->rhs);
	if (node->is_declaration) /* let $x = value: its type is the value's */
		sema_var_declare(sema, target->name, type_none());
	if (node->op != OP_ASSIGN)
		sema_check_operand_range(sema, node, node->op, node->rhs, node->loc);
	struct type *value = node->rhs->type;
	bool is_aggregation = value && type_is_aggregation(value);
	if (target->kind == NODE_VAR) {
		if (is_aggregation) {
			sema_error(sema, node->rhs->loc, "%s() can only be assigned to a map",
				 node->rhs->name);
			return;
		}
		if (node->op != OP_ASSIGN) {
			sema_var_default_int(sema, target);
			sema_check_expr(sema, target);
			if (target->type && target->type->kind != TYPE_NONE && !sema_is_int(target))
				sema_error(sema, node->loc, "'%s=' needs an integer, not %s", op_spelling(node->op),
					 type_name(target->type));
			return;
		}
		if (value && value->kind == TYPE_VOID) {
			sema_error(sema, node->rhs->loc, "this expression has no value to assign");
			return;
		}
		if (value && (value->kind == TYPE_RECORD || (value->kind == TYPE_ARRAY && !value->size))) {
			sema_error(sema, node->rhs->loc, "cannot store %s in a variable; store a pointer to it or "
				 "one of its fields", type_name(value));
			return;
		}
		/* $t = curtask: the variable holds the pointer curtask reads
		 * through, so $t->pid and $t + 1 mean what they mean on curtask
		 * (as in bpftrace, where curtask is a struct task_struct *) */
		if (node->rhs->kind == NODE_BUILTIN && node->rhs->variable &&
		    node->rhs->variable->points_to && node->rhs->variable->points_to())
			value = node->rhs->type = node->rhs->variable->points_to();
		sema_var_assign(sema, target, value);
		return;
	}
	if (target->kind != NODE_MAP) {
		sema_error(sema, target->loc, "can only assign to a $variable or @map");
		return;
	}
	struct map_desc *map = sema_check_map_access(sema, target);
	if (!map)
		return;
	sema->map_uses.items[map->id].assigned = true;
	if (node->op != OP_ASSIGN) {
		if (value && value->kind != TYPE_NONE && !sema_is_int(node->rhs))
			sema_error(sema, node->rhs->loc, "'%s=' needs an integer, not %s",
				 op_spelling(node->op), type_name(value));
		if (map->value_type && type_is_aggregation(map->value_type))
			sema_error(sema, node->loc, "map %s holds %s; '%s=' cannot change it", map->name,
				 type_name(map->value_type), op_spelling(node->op));
		else
			set_map_value(sema, target, map, type_int(8, true));
		target->type = map->value_type;
		return;
	}
	if (value && value->kind == TYPE_INT)
		value = type_widened(value);
	if (value && value->kind == TYPE_RECORD) {
		sema_error(sema, node->rhs->loc, "cannot store %s in a map; store a pointer to it or one of "
			 "its fields", type_name(value));
		return;
	}
	set_map_value(sema, target, map, value);
	target->type = map->value_type;
}

static void check_stmt(struct sema *sema, struct node *node)
{
	switch (node->kind) {
	case NODE_EXPR_STMT:
		node->lhs->value_unused = true;
		sema_check_expr(sema, node->lhs);
		if (node->lhs->type && type_is_aggregation(node->lhs->type))
			sema_error(sema, node->lhs->loc, "%s() must be assigned to a map: @x = %s(...)",
				 node->lhs->name, node->lhs->name);
		break;
	case NODE_ASSIGN:
		check_assign(sema, node);
		break;
	case NODE_IF:
		sema_check_expr(sema, node->cond);
		if (node->cond->type && node->cond->type->kind != TYPE_NONE && !sema_is_int(node->cond))
			sema_error(sema, node->cond->loc, "condition must be an integer, not %s",
				 type_name(node->cond->type));
		check_block(sema, node->then);
		check_block(sema, node->els);
		break;
	case NODE_WHILE:
		sema_check_expr(sema, node->cond);
		if (node->cond->type && node->cond->type->kind != TYPE_NONE && !sema_is_int(node->cond))
			sema_error(sema, node->cond->loc, "condition must be an integer, not %s",
				 type_name(node->cond->type));
		sema->loop_depth++;
		check_block(sema, node->body);
		sema->loop_depth--;
		break;
	case NODE_UNROLL:
		sema_check_expr(sema, node->lhs);
		if (!node->lhs->is_constant || !sema_is_int(node->lhs)) {
			sema_error(sema, node->lhs->loc, "unroll needs a constant integer count");
		} else if (node->lhs->const_value < 1 || node->lhs->const_value > 100) {
			sema_error(sema, node->lhs->loc, "unroll count must be between 1 and 100, not %lld",
				 (long long)node->lhs->const_value);
		}
		check_block(sema, node->body);
		break;
	case NODE_FOR_RANGE: {
		sema_check_expr(sema, node->cond);
		sema_check_expr(sema, node->rhs);
		if (node->cond->type && node->cond->type->kind != TYPE_NONE && !sema_is_int(node->cond))
			sema_error(sema, node->cond->loc, "range start must be an integer");
		if (node->rhs->type && node->rhs->type->kind != TYPE_NONE && !sema_is_int(node->rhs))
			sema_error(sema, node->rhs->loc, "range end must be an integer");
		int mark = sema_scope_open(sema);
		sema_var_declare(sema, node->lhs->name, type_none()); /* the loop's own $i */
		sema_var_assign(sema, node->lhs, type_int(8, true));
		sema->loop_depth++;
		check_block(sema, node->body);
		sema->loop_depth--;
		sema_scope_close(sema, mark);
		break;
	}
	case NODE_FOR_MAP: {
		struct node *map_node = node->rhs;
		if (map_node->kind != NODE_MAP || map_node->args) {
			sema_error(sema, map_node->loc, "for loops iterate over a whole map: for ($kv : @m)");
			break;
		}
		struct map_desc *map = sema_map_for(sema, map_node);
		if (!map->value_type) {
			if (sema->report && !sema->map_uses.items[map->id].assigned)
				sema_error(sema, map_node->loc, "map %s is iterated but never assigned", map->name);
			break;
		}
		if (!map->key_type) {
			sema_error(sema, map_node->loc, "map %s has no keys to iterate over", map->name);
			break;
		}
		if (type_is_aggregation(map->value_type)) {
			sema_error(sema, map_node->loc, "cannot iterate over %s: it holds per-CPU %s values; print() it instead",
				 map->name, type_name(map->value_type));
			break;
		}
		struct type *pair[2] = { map->key_type, map->value_type };
		int mark = sema_scope_open(sema); /* each loop's $kv is its own */
		sema_var_declare(sema, node->lhs->name, type_none());
		sema_var_assign(sema, node->lhs, type_tuple(pair, 2));
		if (node->lhs->var_id >= 0 && node->lhs->var_id < sema->probe->vars.count)
			sema->probe->vars.items[node->lhs->var_id].loop_local = true;
		sema->loop_depth++;
		sema->map_loop_depth++;
		check_block(sema, node->body);
		sema->map_loop_depth--;
		sema->loop_depth--;
		sema_scope_close(sema, mark);
		break;
	}
	case NODE_BREAK:
	case NODE_CONTINUE:
		if (sema->loop_depth == 0)
			sema_error(sema, node->loc, "'%s' outside of a loop",
				 node->kind == NODE_BREAK ? "break" : "continue");
		break;
	case NODE_RETURN:
		if (sema->map_loop_depth > 0 && sema->probe->return_flag_var < 0) {
			struct var_info flag = { .name = xstrdup("return"), .type = type_int(8, false) };
			vec_push(&sema->probe->vars, flag); /* never in scope: no $name reaches it */
			sema->probe->return_flag_var = sema->probe->vars.count - 1;
		}
		break;
	case NODE_BLOCK:
		check_block(sema, node->body);
		break;
	default:
		sema_error(sema, node->loc, "unexpected %s in statement position", node_kind_name(node->kind));
		break;
	}
}

static void check_stmts(struct sema *sema, struct node *list)
{
	for (; list && !(sema->report && diag_too_many(sema->diag)); list = list->next)
		check_stmt(sema, list);
}

/* The statements of a block: what they declare ends with them. */
static void check_block(struct sema *sema, struct node *list)
{
	int mark = sema_scope_open(sema);
	check_stmts(sema, list);
	sema_scope_close(sema, mark);
}

static void check_probe_body(struct sema *sema, struct probe_info *probe, struct probe_point *point)
{
	/* variables are re-learned on every pass: one known from an earlier
	 * pass must not hide a use before its assignment */
	for (int i = 0; i < probe->vars.count; i++)
		free(probe->vars.items[i].name);
	probe->vars.count = 0;
	probe->return_flag_var = -1;
	sema->visible.count = 0;
	sema->unscoped.count = 0;
	sema->probe = probe;
	sema->point = point;
	sema->loop_depth = 0;
	if (probe->node->predicate) {
		sema_check_expr(sema, probe->node->predicate);
		struct type *type = probe->node->predicate->type;
		if (type && type->kind != TYPE_NONE && !type_is_integer_like(type))
			sema_error(sema, probe->node->predicate->loc,
				 "predicate must be an integer, not %s", type_name(type));
	}
	check_stmts(sema, probe->node->body);
}

/* ---- probes ---- */

/* A probe spec with $N and $# replaced by the positional parameters'
 * text (`interval:ms:$1`, `uprobe:$1:main`, not inside double quotes), as
 * bpftrace allows; NULL
 * after an error for a parameter that was not given. */
static char *substitute_positionals(struct sema *sema, const struct node *spec_node)
{
	const char *text = spec_node->name;
	struct strbuf out;
	strbuf_init(&out);
	bool quoted = false;
	for (const char *at = text; *at; at++) {
		/* a quoted part is taken as written, `$1` included (bpftrace 0.17) */
		if (at[0] == '"')
			quoted = !quoted;
		if (quoted || at[0] != '$' || !(at[1] == '#' || (at[1] >= '0' && at[1] <= '9'))) {
			strbuf_putc(&out, *at);
			continue;
		}
		if (at[1] == '#') {
			strbuf_printf(&out, "%d", sema->options->positional_count);
			at++;
			continue;
		}
		char *end;
		long index = strtol(at + 1, &end, 10);
		if (index < 1 || index > sema->options->positional_count) {
			diag_error(sema->diag, spec_node->loc, "probe '%s' uses $%ld, but %d positional "
				   "parameter%s given", text, index, sema->options->positional_count,
				   sema->options->positional_count == 1 ? " was" : "s were");
			strbuf_free(&out);
			return NULL;
		}
		strbuf_puts(&out, sema->options->positional[index - 1]);
		at = end - 1;
	}
	return strbuf_release(&out);
}

/* Whether a spec that matched nothing (expand's -ESRCH, or -ENOENT: no
 * such tracepoint or file) is skipped: as missing_probes says, or by
 * default where the provider skips (uprobes: libraries differ). When every
 * probe is skipped the program still fails (compile_program). */
static bool skips_missing(const struct sema *sema, const struct provider *provider, int expanded)
{
	const char *mode = sema->options->missing_probes;

	if (expanded != -ESRCH && expanded != -ENOENT)
		return false;
	if (!mode)
		return provider->skip_missing && expanded == -ESRCH;
	return strcmp(mode, "error") != 0;
}

static int expand_probe(struct sema *sema, struct probe_info *probe)
{
	for (struct node *spec_node = probe->node->args; spec_node; spec_node = spec_node->next) {
		char *substituted = strchr(spec_node->name, '$') ? substitute_positionals(sema, spec_node)
								  : xstrdup(spec_node->name);
		if (!substituted)
			return -1;
		struct probe_spec *spec = probe_spec_parse(substituted, spec_node->loc);
		free(substituted);
		if (!spec) {
			diag_error(sema->diag, spec_node->loc, "malformed probe '%s'", spec_node->name);
			return -1;
		}
		const struct provider *provider = provider_lookup(spec->provider_name);
		if (!provider) {
			const char *reason = provider_unsupported_reason(spec->provider_name);
			if (reason)
				diag_error(sema->diag, spec_node->loc, "%s", reason);
			else
				diag_error(sema->diag, spec_node->loc, "unknown probe type '%s' in '%s'",
					   spec->provider_name, spec_node->name);
			probe_spec_free(spec);
			return -1;
		}
		char *error = NULL;
		int before = probe->points.count;
		spec->pid = sema->options->target_pid;
		int expanded = provider->expand(spec, &probe->points, &error);
		probe_spec_free(spec);
		if (skips_missing(sema, provider, expanded)) {
			if (!sema->options->missing_probes ||
			    strcmp(sema->options->missing_probes, "ignore") != 0)
				diag_warning(sema->diag, spec_node->loc, "%s; this probe is skipped",
					     error ? error : "nothing matches");
			free(error);
			continue;
		}
		if (expanded < 0) {
			diag_error(sema->diag, spec_node->loc, "%s", error ? error : "invalid probe");
			free(error);
			return -1;
		}
		const char *last_note = NULL;
		for (int i = before; i < probe->points.count; i++) {
			struct probe_point *point = probe->points.items[i];
			if (point->unavailable && !probe->unavailable) {
				probe->unavailable_spec = spec_node;
				probe->unavailable = point->unavailable;
			}
			point->from_wildcard = strpbrk(spec_node->name, "*?[") != NULL;
			/* a stand-in provider (fentry for kprobe, ...) explains itself once */
			if (point->note && (!last_note || strcmp(point->note, last_note) != 0)) {
				diag_note(sema->diag, spec_node->loc, "%s", point->note);
				last_note = point->note;
			}
			/* the point's own provider: a stand-in describes its points */
			if (point->provider->describe && point->provider->describe(point, &error) < 0) {
				diag_error(sema->diag, spec_node->loc, "%s", error ? error : "cannot describe probe");
				free(error);
				return -1;
			}
		}
	}
	/* every spec skipped: the block is left out (and said so above) */
	return 0;
}

int sema_analyze(struct sema *sema, struct ast *ast)
{
	sema_desugar(ast->probes);
	sema->report = true;
	int failures = sema_define_types(sema, ast->definitions) < 0;
	failures += sema_declare_maps(sema, ast->definitions) < 0;
	sema->report = false;
	for (struct node *node = ast->probes; node; node = node->next) {
		struct probe_info probe = { .node = node };
		vec_push(&sema->probes, probe);
		if (expand_probe(sema, &sema->probes.items[sema->probes.count - 1]) < 0)
			failures++;
	}
	if (failures)
		return -1;
	/* blocks whose every probe was skipped take no further part */
	int kept = 0;
	for (int i = 0; i < sema->probes.count; i++) {
		if (sema->probes.items[i].points.count > 0) {
			sema->probes.items[kept++] = sema->probes.items[i];
		} else {
			free(sema->probes.items[i].points.items);
			sema->probes.items[i].points.items = NULL;
			vec_push(&sema->skipped, sema->probes.items[i]);
			sema->skipped_blocks++;
		}
	}
	sema->probes.count = kept;
	if (sema->probes.count == 0) {
		diag_error_noloc(sema->diag, "no probes to attach: every probe in the program was skipped");
		return -1;
	}
	/* silent pass: settle map types across probes. Skipped blocks take part
	 * through a stand-in point that offers every builtin, so maps they alone
	 * write still get the types they would have had. */
	sema->report = false;
	/* (a provider of its own too: builtins and casts ask a point's provider) */
	static const struct provider skipped_provider = { .name = "(skipped)",
							  .prog_type = BPF_PROG_TYPE_KPROBE };
	struct probe_point stand_in = { .name = "(skipped)", .provider = &skipped_provider,
					.features = PROBE_HAS_ARGN | PROBE_HAS_RETVAL | PROBE_HAS_FUNC,
					.args_access = ARGS_PT_REGS, .arg_count = 16 };
	for (int i = 0; i < sema->skipped.count; i++)
		check_probe_body(sema, &sema->skipped.items[i], &stand_in);
	for (int i = 0; i < sema->probes.count; i++)
		check_probe_body(sema, &sema->probes.items[i], sema->probes.items[i].points.items[0]);
	for (int i = 0; sema->options->join_printf && i < sema->probes.count; i++)
		sema_join_printf_runs(ast, &sema->probes.items[i].node->body);
	sema->report = true;
	sema->error_count = 0;
	for (int i = 0; i < sema->probes.count; i++)
		check_probe_body(sema, &sema->probes.items[i], sema->probes.items[i].points.items[0]);
	sema_check_declared_maps(sema);
	/* the body is checked; now what stops these blocks: a probe type the
	 * kernel lacks (a dry run checks the whole program all the same) */
	for (int i = 0; i < sema->probes.count; i++) {
		const struct probe_info *probe = &sema->probes.items[i];
		if (probe->unavailable) {
			diag_error(sema->diag, probe->unavailable_spec->loc, "%s", probe->unavailable);
			sema->error_count++;
		}
	}
	/* after another error a map left without a type is most likely its
	 * consequence (`@a = @b + 1` with @b unknown): say nothing more */
	bool had_errors = sema->error_count > 0;
	for (int i = 0; i < sema->program->maps.count; i++) {
		struct map_desc *map = &sema->program->maps.items[i];
		if (map->role == MAP_ROLE_USER && !map->value_type && (sema->skipped_blocks || had_errors)) {
			map->value_type = type_int(8, true);
		} else if (map->role == MAP_ROLE_USER && !map->value_type) {
			diag_error(sema->diag, sema->map_uses.items[i].first, "map %s is used but never assigned a value",
				   map->name);
			sema->error_count++;
		}
	}
	return sema->error_count ? -1 : 0;
}

int sema_retype_for_point(struct sema *sema, struct probe_info *probe, struct probe_point *point)
{
	int before = sema->error_count;
	check_probe_body(sema, probe, point);
	return sema->error_count > before ? -1 : 0;
}

/* ---- ring-buffer events of builtin calls ---- */

struct event_desc *sema_new_event(struct sema *sema, struct node *call, enum event_kind kind)
{
	/* each pass re-creates the call's event; reuse the slot from the first */
	struct program *program = sema->program;
	if (call->event_id > 0 && call->event_id - 1 < program->events.count &&
	    program->events.items[call->event_id - 1].loc.line == call->loc.line &&
	    program->events.items[call->event_id - 1].loc.column == call->loc.column) {
		struct event_desc *event = &program->events.items[call->event_id - 1];
		event_desc_clear(event);
		event->kind = kind;
		event->loc = call->loc;
		return event;
	}
	struct event_desc event = { .kind = kind, .loc = call->loc };
	vec_push(&program->events, event);
	call->event_id = program->events.count; /* stored +1 so 0 means none */
	return &program->events.items[program->events.count - 1];
}

void sema_event_add_arg(struct event_desc *event, struct type *type, enum arg_conversion conv,
			  const char *strftime_format)
{
	event->args = xrealloc(event->args, sizeof(*event->args) * (event->arg_count + 1));
	int offset = event->record_size ? event->record_size : 8;
	struct event_arg arg = {
		.type = type->kind == TYPE_INT ? type_widened(type) : type,
		.offset = offset,
		.conversion = conv,
		.strftime_format = strftime_format ? xstrdup(strftime_format) : NULL,
	};
	event->args[event->arg_count++] = arg;
	event->record_size = offset + ((type_storage_size(arg.type) + 7) & ~7);
}

bool sema_is_int_constant(struct node *node)
{
	return node->is_constant && node->type && node->type->kind == TYPE_INT;
}

/* printf/system/cat/row: a literal format then values checked against it. */
struct event_desc *sema_check_format_call(struct sema *sema, struct node *call,
					     struct node *format, enum event_kind kind)
{
	sema_check_expr(sema, format);
	if (format->kind != NODE_STRING) {
		sema_error(sema, format->loc, "%s() needs a string literal as its format", call->name);
		return NULL;
	}
	for (struct node *arg = format->next; arg; arg = arg->next)
		sema_check_expr(sema, arg);
	struct format_pieces pieces = { 0 };
	char *error = NULL;
	int error_offset = 0;
	if (format_parse(format->string_value, &pieces, &error, &error_offset) < 0) {
		struct src_loc loc = format->loc;
		sema_error(sema, loc, "%s", error);
		free(error);
		return NULL;
	}
	int given = ast_list_length(format->next);
	if (given != pieces.conversion_count) {
		sema_error(sema, call->loc, "%s() format has %d conversion%s but %d argument%s given",
			 call->name, pieces.conversion_count, pieces.conversion_count == 1 ? "" : "s",
			 given, given == 1 ? " is" : "s are");
		format_pieces_free(&pieces);
		return NULL;
	}
	struct event_desc *event = sema_new_event(sema, call, kind);
	event->format = xstrdup(format->string_value);
	event->record_size = 8;
	struct node *arg = format->next;
	for (int i = 0; i < pieces.count && arg; i++) {
		if (!pieces.items[i].is_conversion)
			continue;
		if (arg->type && arg->type->kind != TYPE_NONE) {
			/* strftime(): a timestamp formatted in user space */
			bool is_strftime = arg->type->strftime_format != NULL;
			char *mismatch = is_strftime ? NULL : format_check_arg(&pieces.items[i], arg->type);
			if (mismatch) {
				sema_error(sema, arg->loc, "%s", mismatch);
				free(mismatch);
			} else if (arg->type->kind == TYPE_VOID || type_is_aggregation(arg->type) ||
				   arg->type->kind == TYPE_RECORD) {
				sema_error(sema, arg->loc, "%s cannot be printed with %s", type_name(arg->type),
					 pieces.items[i].text);
			} else if (is_strftime) {
				sema_event_add_arg(event, type_int(8, false), ARG_STRFTIME,
						   arg->type->strftime_format);
			} else {
				sema_event_add_arg(event, arg->type, ARG_PLAIN, NULL);
			}
		}
		arg = arg->next;
	}
	format_pieces_free(&pieces);
	return event;
}
