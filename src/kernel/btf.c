/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kernel BTF to sonde types (see btf.h for the conversion rules).
 *
 * Sources: vmlinux BTF (/sys/kernel/btf/vmlinux) is read the first time a
 * question needs it; module BTF (/sys/kernel/btf/MODULE) is split BTF on top
 * of it and is read only when a name is not in vmlinux or a module is named
 * ("ext4:ext4_file_open"). Both are read in place by btf_file.c, not parsed
 * whole by libbpf (a third of a tool's start-up); libbpf only writes C
 * declarations for -lv, from a view made when first needed. Each source keeps a table from BTF id to the sonde
 * type made for it, so a BTF id always converts to the same struct type:
 * the compiler may compare record types by pointer, and a record completed
 * once is complete for everybody who reached it.
 *
 * Laziness is what keeps this cheap. A struct becomes a shell record (name,
 * size, btf_id, is_incomplete) the moment it is reached; its members are
 * converted by btf_complete_record, one level at a time.
 *
 * Bitfields: a bitfield member is described as the aligned storage unit of
 * its declared type that holds it (offset of that unit, bit position inside
 * it), which is what a C compiler loads too. In packed structs where the
 * bits straddle such a unit, the unit starts at the member's first byte and
 * is widened until the bits fit.
 */
#include "btf.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <dirent.h>
#include <unistd.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/util.h"
#include "btf_file.h"

#define BTF_SYSFS_DIR "/sys/kernel/btf"

/* One BTF object (vmlinux or a module) and the types made from it. */
struct btf_source {
	char *module;          /* NULL for vmlinux */
	struct btf_file *btf;
	struct type **types;   /* indexed by BTF id; NULL until converted */
	int type_count;
	int object_fd;         /* the kernel's BTF object for a module, -1 until asked for */
};

static struct btf_source vmlinux_source = { .object_fd = -1 };
static bool vmlinux_tried;
static VEC(struct btf_source *) module_sources;
static bool modules_listed;

static bool source_open(struct btf_source *source, struct btf_file *btf)
{
	source->btf = btf;
	source->type_count = (int)btf_file_type_count(btf);
	source->types = xcalloc((size_t)source->type_count, sizeof(*source->types));
	return true;
}

/* Where the sysfs file is missing, libbpf knows the other places a
 * kernel's BTF may be (an ELF vmlinux under /boot...). */
static struct btf_file *vmlinux_elsewhere(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	struct btf_file *file = NULL;
	uint32_t size;
	const void *data = btf ? btf__raw_data(btf, &size) : NULL;

	if (data && btf_file_from_memory(data, size, NULL, &file) < 0)
		file = NULL;
	btf__free(btf);
	return file;
}

static struct btf_source *vmlinux(void)
{
	if (!vmlinux_tried) {
		struct btf_file *btf = NULL;
		vmlinux_tried = true;
		if (btf_file_open(BTF_SYSFS_DIR "/vmlinux", NULL, &btf) < 0)
			btf = vmlinux_elsewhere();
		if (btf)
			source_open(&vmlinux_source, btf);
	}
	return vmlinux_source.btf ? &vmlinux_source : NULL;
}

bool btf_available(void)
{
	return vmlinux() != NULL;
}

/* Every module with BTF gets a source entry (its BTF read on first use). */
static void list_modules(void)
{
	DIR *dir;
	struct dirent *entry;

	if (modules_listed)
		return;
	modules_listed = true;
	dir = opendir(BTF_SYSFS_DIR);
	if (!dir)
		return;
	while ((entry = readdir(dir))) {
		if (entry->d_name[0] == '.' || strcmp(entry->d_name, "vmlinux") == 0)
			continue;
		struct btf_source *source = xcalloc(1, sizeof(*source));
		source->module = xstrdup(entry->d_name);
		source->object_fd = -1;
		vec_push(&module_sources, source);
	}
	closedir(dir);
}

static struct btf_source *module_open(struct btf_source *source)
{
	if (!source->btf) {
		struct btf_source *base = vmlinux();
		char *path;
		struct btf_file *btf = NULL;
		if (!base)
			return NULL;
		path = xasprintf(BTF_SYSFS_DIR "/%s", source->module);
		int err = btf_file_open(path, base->btf, &btf);
		free(path);
		if (err < 0)
			return NULL;
		source_open(source, btf);
	}
	return source;
}

static struct btf_source *module_source(const char *module)
{
	list_modules();
	for (int i = 0; i < module_sources.count; i++) {
		if (strcmp(module_sources.items[i]->module, module) == 0)
			return module_open(module_sources.items[i]);
	}
	return NULL;
}

static void source_forget(struct btf_source *source)
{
	if (source->types)
		memset(source->types, 0, sizeof(*source->types) * (size_t)source->type_count);
}

void btf_forget_types(void)
{
	source_forget(&vmlinux_source);
	for (int i = 0; i < module_sources.count; i++)
		source_forget(module_sources.items[i]);
}

/* ---- conversion ---- */

static struct type *convert(struct btf_source *source, int id);

/* Skips typedefs and qualifiers; returns the id of the underlying type. */
static int skip_modifiers(const struct btf_file *btf, int id)
{
	for (int depth = 0; id > 0 && depth < 64; depth++) {
		const struct btf_type *t = btf_file_type(btf, (uint32_t)id);
		if (!t)
			return 0;
		switch (btf_kind(t)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_CONST:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
		case BTF_KIND_DECL_TAG:
			id = (int)t->type;
			break;
		default:
			return id;
		}
	}
	return id;
}

/* "char", "signed char" or "unsigned char" under qualifiers only: arrays of
 * them are strings. A typedef (u8, __u8) means bytes, not text. */
static bool is_char(const struct btf_file *btf, int id)
{
	for (int depth = 0; id > 0 && depth < 16; depth++) {
		const struct btf_type *t = btf_file_type(btf, (uint32_t)id);
		if (!t)
			return false;
		if (btf_is_const(t) || btf_is_volatile(t) || btf_is_restrict(t)) {
			id = (int)t->type;
			continue;
		}
		if (!btf_is_int(t) || t->size != 1)
			return false;
		const char *name = btf_file_name(btf, t->name_off);
		return name && strstr(name, "char") != NULL;
	}
	return false;
}

/* A FWD declaration stands for the struct of the same name when the BTF
 * (or, for a module, its vmlinux base) defines it. */
static int resolve_forward(const struct btf_file *btf, const struct btf_type *t)
{
	const char *name = btf_file_name(btf, t->name_off);
	int kind = btf_kflag(t) ? BTF_KIND_UNION : BTF_KIND_STRUCT;

	if (!name || !name[0])
		return 0;
	int id = btf_file_find(btf, name, kind);
	return id > 0 ? id : 0;
}

static struct type *record_shell(struct btf_source *source, int id, const struct btf_type *t)
{
	const char *name = btf_file_name(source->btf, t->name_off);
	struct type *record = type_new(TYPE_RECORD);
	bool is_union = btf_is_union(t);

	record->size = (int)t->size;
	record->btf_id = id;
	record->is_union = is_union;
	record->is_incomplete = true;
	record->record_name = xasprintf("%s %s", is_union ? "union" : "struct",
					name && name[0] ? name : "(anonymous)");
	return record;
}

/* An enum: an integer of its size that knows its enumerators' names, so
 * that `%s` and the printers can show them. */
static struct type *enum_type(const struct btf_file *btf, const struct btf_type *t)
{
	const char *name = btf_file_name(btf, t->name_off);
	char *spelling = name && name[0] ? xasprintf("enum %s", name) : xstrdup("enum");
	struct type_enum *enumeration = type_enum_new(spelling);
	free(spelling);
	for (int i = 0; i < btf_vlen(t); i++) {
		if (btf_is_enum(t)) {
			const struct btf_enum *entry = btf_enum(t) + i;
			type_enum_add(enumeration, btf_file_name(btf, entry->name_off),
				      btf_kflag(t) ? (int64_t)entry->val : (int64_t)(uint32_t)entry->val);
		} else {
			const struct btf_enum64 *entry = btf_enum64(t) + i;
			type_enum_add(enumeration, btf_file_name(btf, entry->name_off),
				      (int64_t)btf_enum64_value(entry));
		}
	}
	struct type *type = type_enum_int(enumeration, t->size > 8 ? 8 : (int)t->size);
	type->is_signed = btf_kflag(t); /* kflag marks an enum with negative values */
	return type;
}

static struct type *convert_uncached(struct btf_source *source, int id)
{
	const struct btf_file *btf = source->btf;
	const struct btf_type *t = btf_file_type(btf, (uint32_t)id);
	struct type *type;

	if (!t)
		return NULL;
	switch (btf_kind(t)) {
	case BTF_KIND_INT: {
		uint32_t encoding = btf_int_encoding(t);
		int size = t->size > 8 ? 8 : (int)t->size;
		if (encoding & BTF_INT_BOOL)
			return type_int(size, false);
		return type_int(size, (encoding & BTF_INT_SIGNED) != 0);
	}
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		return enum_type(btf, t);
	case BTF_KIND_FLOAT:
		/* No floating point in BPF: keep the size, show the bits. */
		return type_int(t->size > 8 ? 8 : (int)t->size, false);
	case BTF_KIND_PTR: {
		int target = skip_modifiers(btf, (int)t->type);
		const struct btf_type *pointee = target ? btf_file_type(btf, (uint32_t)target) : NULL;
		if (!pointee || btf_is_func_proto(pointee) || btf_is_func(pointee))
			return type_pointer(NULL, false);
		/* Allocated before the pointee is converted, so a struct that
		 * points to its own kind (list links) does not recurse. */
		type = type_pointer(NULL, false);
		source->types[id] = type;
		type->pointee = convert(source, target);
		return type;
	}
	case BTF_KIND_ARRAY: {
		const struct btf_array *array = btf_array(t);
		if (is_char(btf, (int)array->type))
			return type_string((int)array->nelems);
		type = type_new(TYPE_ARRAY);
		source->types[id] = type;
		type->pointee = convert(source, (int)array->type);
		type->array_length = (int)array->nelems;
		type->size = type->pointee ? type->pointee->size * (int)array->nelems : 0;
		return type;
	}
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return record_shell(source, id, t);
	case BTF_KIND_FWD: {
		int target = resolve_forward(btf, t);
		if (target)
			return convert(source, target);
		type = record_shell(source, id, t);
		type->is_union = btf_kflag(t);
		free(type->record_name);
		type->record_name = xasprintf("%s %s", type->is_union ? "union" : "struct",
					      btf_file_name(btf, t->name_off));
		type->size = 0;
		return type;
	}
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
	case BTF_KIND_DECL_TAG:
		return convert(source, skip_modifiers(btf, id));
	default:
		/* void, functions, variables, data sections: no value type. */
		return NULL;
	}
}

static struct type *convert(struct btf_source *source, int id)
{
	struct type *type;

	if (id <= 0 || id >= source->type_count)
		return NULL;
	if (source->types[id])
		return source->types[id];
	type = convert_uncached(source, id);
	if (type && !source->types[id])
		source->types[id] = type;
	return type;
}

typedef VEC(struct type_field) field_list;

static void add_member_fields(struct btf_source *source, const struct btf_type *t,
			      int base_bits, field_list *fields)
{
	const struct btf_file *btf = source->btf;
	const struct btf_member *member = btf_members(t);
	int count = btf_vlen(t);

	for (int i = 0; i < count; i++, member++) {
		const char *name = btf_file_name(btf, member->name_off);
		int bits_offset = base_bits + (int)btf_member_bit_offset(t, (uint32_t)i);
		int bitfield_bits = (int)btf_member_bitfield_size(t, (uint32_t)i);
		int target = skip_modifiers(btf, (int)member->type);
		const struct btf_type *member_type = btf_file_type(btf, (uint32_t)target);

		if (!name || !name[0]) {
			/* Anonymous struct/union: its members belong to us. */
			if (member_type && (btf_is_struct(member_type) || btf_is_union(member_type)))
				add_member_fields(source, member_type, bits_offset, fields);
			continue;
		}
		struct type *type = convert(source, (int)member->type);
		if (!type)
			continue;
		struct type_field field = { .name = xstrdup(name), .type = type };
		if (bitfield_bits && type->kind == TYPE_INT) {
			int unit = type->size;
			int unit_offset = bits_offset / (unit * 8) * unit;
			int shift = bits_offset - unit_offset * 8;
			if (shift + bitfield_bits > unit * 8) {
				/* Packed: start at the first byte and widen. */
				unit_offset = bits_offset / 8;
				shift = bits_offset % 8;
				while (shift + bitfield_bits > unit * 8 && unit < 8)
					unit *= 2;
				field.type = type_int(unit, type->is_signed);
			}
			field.offset = unit_offset;
			field.bitfield_bits = bitfield_bits;
			field.bitfield_offset = shift;
		} else {
			field.offset = bits_offset / 8;
		}
		vec_push(fields, field);
	}
}

/* Which source made this record (the id alone is ambiguous across modules). */
static struct btf_source *source_of(const struct type *record)
{
	int id = record->btf_id;

	if (vmlinux_source.types && id > 0 && id < vmlinux_source.type_count &&
	    vmlinux_source.types[id] == record)
		return &vmlinux_source;
	for (int i = 0; i < module_sources.count; i++) {
		struct btf_source *source = module_sources.items[i];
		if (source->types && id > 0 && id < source->type_count && source->types[id] == record)
			return source;
	}
	return NULL;
}

void btf_complete_record(struct type *record)
{
	struct btf_source *source;
	const struct btf_type *t;
	field_list fields = { 0 };

	if (!record || record->kind != TYPE_RECORD || !record->is_incomplete)
		return;
	if (!record->btf_id) {
		/* a record known only by name (btf_lazy_record): find it now */
		struct type *found = record->record_name ? btf_type_by_name(record->record_name) : NULL;
		record->is_incomplete = false;
		if (!found || found->kind != TYPE_RECORD)
			return;
		btf_complete_record(found);
		record->btf_id = found->btf_id;
		record->size = found->size;
		record->is_union = found->is_union;
		record->field_count = found->field_count;
		record->fields = xcalloc((size_t)found->field_count + 1, sizeof(*record->fields));
		for (int i = 0; i < found->field_count; i++) {
			record->fields[i] = found->fields[i];
			record->fields[i].name = found->fields[i].name ? xstrdup(found->fields[i].name) : NULL;
		}
		return;
	}
	source = source_of(record);
	if (!source)
		return;
	t = btf_file_type(source->btf, (uint32_t)record->btf_id);
	if (!t || !(btf_is_struct(t) || btf_is_union(t)))
		return; /* an opaque forward declaration stays incomplete */
	/* Marked first: a member pointing back here must not start again. */
	record->is_incomplete = false;
	add_member_fields(source, t, 0, &fields);
	record->fields = fields.items;
	record->field_count = fields.count;
}

/* ---- names ---- */

/* C spellings of integer types as BTF (i.e. the compiler) names them. */
static const char *btf_int_spelling(const char *name)
{
	static const char *const spellings[][2] = {
		{ "unsigned", "unsigned int" },
		{ "signed", "int" },
		{ "signed int", "int" },
		{ "short", "short int" },
		{ "signed short", "short int" },
		{ "unsigned short", "short unsigned int" },
		{ "unsigned short int", "short unsigned int" },
		{ "long", "long int" },
		{ "signed long", "long int" },
		{ "unsigned long", "long unsigned int" },
		{ "unsigned long int", "long unsigned int" },
		{ "long long", "long long int" },
		{ "signed long long", "long long int" },
		{ "unsigned long long", "long long unsigned int" },
		{ "unsigned long long int", "long long unsigned int" },
	};

	for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
		if (strcmp(name, spellings[i][0]) == 0)
			return spellings[i][1];
	}
	return name;
}

struct type *btf_type_by_name(const char *name)
{
	static const struct {
		const char *prefix;
		int kind;
	} tagged[] = {
		{ "struct ", BTF_KIND_STRUCT },
		{ "union ", BTF_KIND_UNION },
		{ "enum ", BTF_KIND_ENUM },
	};
	struct btf_source *source = vmlinux();
	int id = -1;

	if (!source || !name)
		return NULL;
	for (size_t i = 0; i < sizeof(tagged) / sizeof(tagged[0]); i++) {
		size_t length = strlen(tagged[i].prefix);
		if (strncmp(name, tagged[i].prefix, length) != 0)
			continue;
		const char *tag = name + length;
		while (*tag == ' ')
			tag++;
		id = btf_file_find(source->btf, tag, tagged[i].kind);
		if (id < 0 && tagged[i].kind == BTF_KIND_ENUM)
			id = btf_file_find(source->btf, tag, BTF_KIND_ENUM64);
		break;
	}
	if (id == -1) {
		id = btf_file_find(source->btf, name, BTF_KIND_TYPEDEF);
		if (id < 0)
			id = btf_file_find(source->btf, btf_int_spelling(name), BTF_KIND_INT);
	}
	if (id <= 0)
		return NULL;
	struct type *type = convert(source, id);
	/* A struct named in the program is about to be used: give it fields. */
	btf_complete_record(type);
	return type;
}

/* "module:function" or "function"; the module's source or, without one,
 * vmlinux then every module. */
static int find_function(const char *function, struct btf_source **found)
{
	const char *colon = strchr(function, ':');
	struct btf_source *source;
	int id;

	if (colon) {
		char *module = xstrndup(function, (size_t)(colon - function));
		source = strcmp(module, "vmlinux") == 0 ? vmlinux() : module_source(module);
		free(module);
		if (!source)
			return -ENOENT;
		id = btf_file_find(source->btf, colon + 1, BTF_KIND_FUNC);
		/* A split BTF also finds its base's functions; those are not the module's. */
		if (id <= 0 || (source != &vmlinux_source && id < vmlinux_source.type_count))
			return -ENOENT;
		*found = source;
		return id;
	}
	source = vmlinux();
	if (!source)
		return -ENOENT;
	id = btf_file_find(source->btf, function, BTF_KIND_FUNC);
	if (id > 0) {
		*found = source;
		return id;
	}
	list_modules();
	for (int i = 0; i < module_sources.count; i++) {
		source = module_open(module_sources.items[i]);
		if (!source)
			continue;
		id = btf_file_find(source->btf, function, BTF_KIND_FUNC);
		if (id >= vmlinux_source.type_count) {
			*found = source;
			return id;
		}
	}
	return -ENOENT;
}

/* Parameters of a FUNC_PROTO as a u64-array record, skipping the first
 * `skip`. Each parameter takes one u64 slot, except a struct passed by value
 * in two registers (9 to 16 bytes), which takes two, as the kernel lays
 * out the context of fentry and raw tracepoint programs. */
static struct type *proto_record(struct btf_source *source, const struct btf_type *proto,
				 int skip, const char *record_name)
{
	const struct btf_param *param = btf_params(proto);
	int count = btf_vlen(proto);
	struct type *record = type_new(TYPE_RECORD);
	field_list fields = { 0 };
	int slot = 0;

	record->record_name = xstrdup(record_name);
	for (int i = 0; i < count; i++, param++) {
		if (i < skip)
			continue;
		if (param->type == 0)
			break; /* the `...` of a variadic function */
		const char *name = btf_file_name(source->btf, param->name_off);
		struct type *type = convert(source, (int)param->type);
		struct type_field field = {
			.name = name && name[0] ? xstrdup(name) : xasprintf("arg%d", i - skip),
			.type = type ? type : type_int(8, false),
			.offset = slot * 8,
		};
		vec_push(&fields, field);
		slot += field.type->kind == TYPE_RECORD && field.type->size > 8 ? 2 : 1;
	}
	record->fields = fields.items;
	record->field_count = fields.count;
	record->size = slot * 8;
	return record;
}

int btf_function_args(const char *function, struct type **args_record, struct type **return_type)
{
	struct btf_source *source = NULL;
	int id = find_function(function, &source);
	const struct btf_type *func, *proto;
	const char *bare = strchr(function, ':') ? strchr(function, ':') + 1 : function;

	if (id < 0)
		return id;
	func = btf_file_type(source->btf, (uint32_t)id);
	proto = func ? btf_file_type(source->btf, func->type) : NULL;
	if (!proto || !btf_is_func_proto(proto))
		return -ENOENT;
	char *name = xasprintf("struct _fentry_%s", bare);
	*args_record = proto_record(source, proto, 0, name);
	free(name);
	if (return_type)
		*return_type = convert(source, (int)proto->type);
	return 0;
}

/* The kernel's fd for a module's BTF object, found by name among the loaded
 * BTF objects (libbpf 1.1 has no lookup by name). */
static int module_object_fd(struct btf_source *source)
{
	uint32_t id = 0;

	if (source->object_fd >= 0)
		return source->object_fd;
	while (bpf_btf_get_next_id(id, &id) == 0) {
		struct bpf_btf_info info;
		uint32_t length = sizeof(info);
		char name[64] = "";
		int fd = bpf_btf_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		info.name = (uint64_t)(uintptr_t)name;
		info.name_len = sizeof(name);
		if (bpf_obj_get_info_by_fd(fd, &info, &length) == 0 && info.kernel_btf &&
		    strcmp(name, source->module) == 0) {
			source->object_fd = fd;
			return fd;
		}
		close(fd);
	}
	return -ENOENT;
}

int btf_percpu_var_id(const char *name, int *size)
{
	struct btf_source *source = vmlinux();
	if (!source)
		return -ENOENT;
	int id = btf_file_find(source->btf, name, BTF_KIND_VAR);
	if (id <= 0)
		return -ENOENT;
	const struct btf_type *var = btf_file_type(source->btf, (uint32_t)id);
	long bytes = var ? btf_file_resolve_size(source->btf, var->type) : -1;
	*size = bytes > 0 ? (int)bytes : 0;
	return id;
}

int btf_function_id(const char *function, int *btf_id, int *btf_obj_fd)
{
	struct btf_source *source = NULL;
	int id = find_function(function, &source);

	if (id < 0)
		return id;
	*btf_id = id;
	*btf_obj_fd = 0;
	if (source != &vmlinux_source) {
		int fd = module_object_fd(source);
		if (fd < 0)
			return fd;
		*btf_obj_fd = fd;
	}
	return 0;
}

/* The probe function type of raw tracepoint NAME in one source: its first
 * parameter is the `void *__data` cookie, the rest are the tracepoint's
 * arguments. __probestub_NAME (kernels from 6.4) and __bpf_trace_NAME (when
 * the event is its own class) name the parameters; the btf_trace_NAME
 * typedef, which every raw tracepoint has, only types them. */
/* Whether two BTF type ids name the same C type: the same id, or (when one
 * compilation unit's copy was not merged with another's) the same kind and
 * name, through pointers and qualifiers. */
static bool same_c_type(const struct btf_file *btf, uint32_t a, uint32_t b, int depth)
{
	if (a == b)
		return true;
	if (depth > 4)
		return false;
	const struct btf_type *ta = btf_file_type(btf, a), *tb = btf_file_type(btf, b);
	while (ta && (btf_is_const(ta) || btf_is_volatile(ta) || btf_is_restrict(ta)))
		ta = btf_file_type(btf, ta->type);
	while (tb && (btf_is_const(tb) || btf_is_volatile(tb) || btf_is_restrict(tb)))
		tb = btf_file_type(btf, tb->type);
	if (!ta || !tb || btf_kind(ta) != btf_kind(tb))
		return false;
	if (btf_is_ptr(ta))
		return same_c_type(btf, ta->type, tb->type, depth + 1);
	return ta->name_off && strcmp(btf_file_name(btf, ta->name_off),
				      btf_file_name(btf, tb->name_off)) == 0;
}

/* A __bpf_trace_* function prototype with the parameter types of `proto`
 * and names for them, or NULL. Several classes may share the types
 * (sched_kthread_stop and sched_wakeup_template both take a task); the one
 * whose name shares the longest beginning with the event's is taken. */
static const struct btf_type *class_function_proto(struct btf_source *source, const char *event,
						   const struct btf_type *proto)
{
	const struct btf_file *btf = source->btf;
	int first_id = source == &vmlinux_source ? 1 : vmlinux_source.type_count;
	const struct btf_param *wanted = btf_params(proto);
	int count = (int)btf_file_type_count(btf);
	const struct btf_type *best = NULL;
	size_t best_common = 0;

	for (int id = first_id; id < count; id++) {
		const struct btf_type *t = btf_file_type(btf, (uint32_t)id);
		const char *name = btf_is_func(t) ? btf_file_name(btf, t->name_off) : "";
		if (strncmp(name, "__bpf_trace_", 12) != 0)
			continue;
		const struct btf_type *candidate = btf_file_type(btf, t->type);
		if (!candidate || !btf_is_func_proto(candidate) || btf_vlen(candidate) != btf_vlen(proto))
			continue;
		const struct btf_param *params = btf_params(candidate);
		bool same = true;
		for (int i = 0; i < btf_vlen(proto) && same; i++)
			same = params[i].name_off != 0 && same_c_type(btf, params[i].type, wanted[i].type, 0);
		size_t common = 0;
		while (name[12 + common] && name[12 + common] == event[common])
			common++;
		if (same && (!best || common > best_common)) {
			best = candidate;
			best_common = common;
		}
	}
	return best;
}

static const struct btf_type *tracepoint_proto_in(struct btf_source *source, const char *name)
{
	static const char *const function_prefixes[] = { "__probestub_", "__bpf_trace_" };
	const struct btf_file *btf = source->btf;
	int first_id = source == &vmlinux_source ? 1 : vmlinux_source.type_count;
	const struct btf_type *t;
	char *full;
	int id;

	for (size_t i = 0; i < sizeof(function_prefixes) / sizeof(function_prefixes[0]); i++) {
		full = xasprintf("%s%s", function_prefixes[i], name);
		id = btf_file_find(btf, full, BTF_KIND_FUNC);
		free(full);
		t = id >= first_id ? btf_file_type(btf, (uint32_t)id) : NULL;
		t = t ? btf_file_type(btf, t->type) : NULL;
		if (t && btf_is_func_proto(t) && btf_vlen(t) >= 1)
			return t;
	}
	full = xasprintf("btf_trace_%s", name);
	id = btf_file_find(btf, full, BTF_KIND_TYPEDEF);
	free(full);
	t = id >= first_id ? btf_file_type(btf, (uint32_t)id) : NULL;
	t = t ? btf_file_type(btf, t->type) : NULL;
	t = t && btf_is_ptr(t) ? btf_file_type(btf, t->type) : NULL;
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 1)
		return NULL;
	/* Before 6.4 an event that shares its class has no function of its own
	 * name; its class's __bpf_trace_CLASS has the same parameter types,
	 * and names them. */
	const struct btf_type *named = class_function_proto(source, name, t);
	return named ? named : t;
}

/* "NAME", "vmlinux:NAME" or "MODULE:NAME"; without a module, vmlinux is
 * searched first, then every module. */
static const struct btf_type *tracepoint_proto(const char *name, struct btf_source **found)
{
	const char *colon = strchr(name, ':');
	const char *bare = colon ? colon + 1 : name;
	struct btf_source *source;
	const struct btf_type *proto = NULL;

	if (colon && strncmp(name, "vmlinux:", 8) != 0) {
		char *module = xstrndup(name, (size_t)(colon - name));
		source = module_source(module);
		free(module);
		proto = source ? tracepoint_proto_in(source, bare) : NULL;
	} else {
		source = vmlinux();
		proto = source ? tracepoint_proto_in(source, bare) : NULL;
		if (!proto && source && !colon) {
			list_modules();
			for (int i = 0; !proto && i < module_sources.count; i++) {
				source = module_open(module_sources.items[i]);
				proto = source ? tracepoint_proto_in(source, bare) : NULL;
			}
		}
	}
	*found = source;
	return proto;
}

int btf_tracepoint_args(const char *name, struct type **args_record)
{
	struct btf_source *source = NULL;
	const struct btf_type *proto = tracepoint_proto(name, &source);
	const char *bare = strchr(name, ':') ? strchr(name, ':') + 1 : name;

	if (!proto)
		return -ENOENT;
	char *record_name = xasprintf("struct _rawtracepoint_%s", bare);
	*args_record = proto_record(source, proto, 1, record_name);
	free(record_name);
	return 0;
}

/* ---- enumerating names ---- */

void btf_name_list_free(btf_name_list *list)
{
	for (int i = 0; i < list->count; i++) {
		free(list->items[i].module);
		free(list->items[i].name);
	}
	free(list->items);
	list->items = NULL;
	list->count = list->capacity = 0;
}

static void collect_names(struct btf_source *source, int first_id, int kind, const char *prefix,
			  btf_name_list *out)
{
	size_t prefix_length = strlen(prefix);

	for (int id = first_id; id < source->type_count; id++) {
		const struct btf_type *t = btf_file_type(source->btf, (uint32_t)id);
		if (!t || (int)btf_kind(t) != kind)
			continue;
		const char *name = btf_file_name(source->btf, t->name_off);
		if (!name || strncmp(name, prefix, prefix_length) != 0 || !name[prefix_length])
			continue;
		struct btf_name entry = {
			.module = source->module ? xstrdup(source->module) : NULL,
			.name = xstrdup(name + prefix_length),
		};
		vec_push(out, entry);
	}
}

int btf_list_names(int kind, const char *prefix, bool with_modules, btf_name_list *out)
{
	struct btf_source *source = vmlinux();

	if (!source)
		return -ENOENT;
	collect_names(source, 1, kind, prefix, out);
	if (!with_modules)
		return 0;
	list_modules();
	for (int i = 0; i < module_sources.count; i++) {
		struct btf_source *module = module_open(module_sources.items[i]);
		if (module)
			collect_names(module, vmlinux_source.type_count, kind, prefix, out);
	}
	return 0;
}

bool btf_vmlinux_has(int kind, const char *name)
{
	struct btf_source *source = vmlinux();

	return source && btf_file_find(source->btf, name, kind) > 0;
}

/* ---- C declarations, for -lv ---- */

static void append_printf(void *context, const char *fmt, va_list args)
{
	strbuf_vprintf(context, fmt, args);
}

/* "struct task_struct *prev", as the kernel source declares it. */
static char *declaration(const struct btf_file *btf, int type_id, const char *name)
{
	LIBBPF_OPTS(btf_dump_emit_type_decl_opts, options, .field_name = name);
	struct strbuf sb;
	struct btf_dump *dump;

	strbuf_init(&sb);
	if (type_id == 0) {
		strbuf_printf(&sb, "void %s", name);
		return strbuf_release(&sb);
	}
	struct btf *view = btf_file_libbpf(btf);
	dump = view ? btf_dump__new(view, append_printf, &sb, NULL) : NULL;
	if (!dump || btf_dump__emit_type_decl(dump, (uint32_t)type_id, &options) < 0) {
		strbuf_reset(&sb);
		strbuf_printf(&sb, "? %s", name);
	}
	btf_dump__free(dump);
	return strbuf_release(&sb);
}

static void proto_declarations(const struct btf_file *btf, const struct btf_type *proto, int skip,
			       btf_decl_list *out)
{
	const struct btf_param *param = btf_params(proto);
	int count = btf_vlen(proto);

	for (int i = 0; i < count; i++, param++) {
		if (i < skip)
			continue;
		if (param->type == 0) {
			vec_push(out, xstrdup("..."));
			break;
		}
		const char *name = btf_file_name(btf, param->name_off);
		char *fallback = xasprintf("arg%d", i - skip);
		vec_push(out, declaration(btf, (int)param->type, name && name[0] ? name : fallback));
		free(fallback);
	}
}

int btf_function_declarations(const char *function, btf_decl_list *out)
{
	struct btf_source *source = NULL;
	int id = find_function(function, &source);
	const struct btf_type *func, *proto;

	if (id < 0)
		return id;
	func = btf_file_type(source->btf, (uint32_t)id);
	proto = func ? btf_file_type(source->btf, func->type) : NULL;
	if (!proto || !btf_is_func_proto(proto))
		return -ENOENT;
	proto_declarations(source->btf, proto, 0, out);
	if (proto->type)
		vec_push(out, declaration(source->btf, (int)proto->type, "retval"));
	return 0;
}

int btf_tracepoint_declarations(const char *name, btf_decl_list *out)
{
	struct btf_source *source = NULL;
	const struct btf_type *proto = tracepoint_proto(name, &source);

	if (!proto)
		return -ENOENT;
	proto_declarations(source->btf, proto, 1, out);
	return 0;
}

void btf_decl_list_free(btf_decl_list *list)
{
	for (int i = 0; i < list->count; i++)
		free(list->items[i]);
	free(list->items);
	list->items = NULL;
	list->count = list->capacity = 0;
}

/*
 * -lv 'struct task_struct': the C definition, as libbpf's btf_dump writes
 * it (the form bpftrace prints). btf_dump first writes every type the
 * definition needs by value, so only the last definition, the one asked
 * for, is kept.
 */
int btf_type_definition(const char *name, char **text)
{
	static const struct { const char *prefix; int kind; } tagged[] = {
		{ "struct ", BTF_KIND_STRUCT }, { "union ", BTF_KIND_UNION }, { "enum ", BTF_KIND_ENUM },
	};
	struct btf_source *source = vmlinux();
	int id = -ENOENT;

	*text = NULL;
	if (!source)
		return -ENOENT;
	for (size_t i = 0; i < sizeof(tagged) / sizeof(tagged[0]); i++) {
		size_t length = strlen(tagged[i].prefix);
		if (strncmp(name, tagged[i].prefix, length) != 0)
			continue;
		id = btf_file_find(source->btf, name + length, tagged[i].kind);
		if (id < 0 && tagged[i].kind == BTF_KIND_ENUM)
			id = btf_file_find(source->btf, name + length, BTF_KIND_ENUM64);
	}
	if (id <= 0)
		return -ENOENT;
	struct strbuf sb;
	strbuf_init(&sb);
	struct btf *view = btf_file_libbpf(source->btf);
	struct btf_dump *dump = view ? btf_dump__new(view, append_printf, &sb, NULL) : NULL;
	if (!dump || btf_dump__dump_type(dump, (uint32_t)id) < 0) {
		btf_dump__free(dump);
		strbuf_free(&sb);
		return -EINVAL;
	}
	btf_dump__free(dump);
	char *all = strbuf_release(&sb);
	char *heading = xasprintf("%s {\n", name);
	char *start = NULL;
	for (char *at = all ? strstr(all, heading) : NULL; at; at = strstr(at + 1, heading))
		if (at == all || at[-1] == '\n')
			start = at;
	free(heading);
	if (!start) {
		free(all);
		return -ENOENT;
	}
	*text = xstrdup(start);
	free(all);
	return 0;
}

int btf_enum_value(const char *name, int64_t *value)
{
	return btf_enum_constant(name, value, NULL);
}

int btf_enum_constant(const char *name, int64_t *value, struct type **type)
{
	struct btf_source *source = vmlinux();
	int index;
	if (!source)
		return -ENOENT;
	int id = btf_file_enum_constant(source->btf, name, &index);
	if (id < 0)
		return id;
	const struct btf_type *t = btf_file_type(source->btf, (uint32_t)id);
	if (btf_is_enum(t)) {
		const struct btf_enum *entry = btf_enum(t) + index;
		*value = btf_kflag(t) ? (int64_t)entry->val : (int64_t)(uint32_t)entry->val;
	} else {
		*value = (int64_t)btf_enum64_value(btf_enum64(t) + index);
	}
	if (type)
		*type = type_widened(convert(source, id));
	return 0;
}

int btf_tracepoint_record(const char *name, struct type **record)
{
	char *struct_name = xasprintf("struct trace_event_raw_%s", name);
	struct type *raw = btf_available() ? btf_type_by_name(struct_name) : NULL;
	free(struct_name);
	if (!raw || raw->kind != TYPE_RECORD)
		return -ENOENT;
	if (raw->is_incomplete)
		btf_complete_record(raw);
	struct type *args = type_new(TYPE_RECORD);
	args->record_name = xasprintf("struct _tracepoint_%s", name);
	args->size = raw->size;
	args->fields = xcalloc((size_t)raw->field_count + 1, sizeof(*args->fields));
	for (int i = 0; i < raw->field_count; i++) {
		const struct type_field *field = &raw->fields[i];
		if (!field->name || strcmp(field->name, "ent") == 0 || strcmp(field->name, "__data") == 0)
			continue;
		struct type_field copy = *field;
		copy.name = xstrdup(field->name);
		args->fields[args->field_count++] = copy;
	}
	*record = args;
	return 0;
}

struct type *btf_lazy_record(const char *name)
{
	struct type *record = type_new(TYPE_RECORD);
	record->record_name = xstrdup(name);
	record->is_incomplete = true;
	return record;
}
