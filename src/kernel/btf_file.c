/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading a kernel BTF blob in place (see btf_file.h for why).
 *
 * Layout: a header (magic, version, where the type and string sections
 * are), then the type section, a run of variable-length records (a
 * `struct btf_type`, then per-kind data whose length follows from its kind
 * and vlen), then the string section, NUL-terminated names addressed by
 * byte offset. Type ids are positions in the run, starting at 1 (0 is
 * void). A split file (a module's) continues its base: its first type id
 * is the base's type count and its string offsets start at the base's
 * string section length.
 *
 * Opening costs one walk over the type headers, to note where every 16th
 * record starts and which types are enums; nothing is copied when the
 * kernel lets the file be mapped. Enumerator names are hashed the first
 * time a constant is asked for, since a program may name dozens of them
 * and each would otherwise be some 19,000 string comparisons. Type names
 * are searched by walking the records until a program has asked for many
 * (a wildcard over functions), and are then indexed once.
 */
#include "btf_file.h"

#include <bpf/btf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/util.h"

/* libbpf's limit on typedef/qualifier/array chains in btf__resolve_size */
#define RESOLVE_DEPTH_MAX 32

/* Every CHECKPOINT_STRIDE-th type's offset is kept; the ones between are
 * found by stepping over fewer than that many records. A full table is
 * half a megabyte of fresh memory for vmlinux, and faulting it in cost
 * more (some 3 ms in a VM) than all the stepping a program's types need. */
#define CHECKPOINT_STRIDE 16
#define SEARCH_LANES 8

/* A program's types ask for the same names again (each use of curtask
 * looks up task_struct; a raw tracepoint's typedef is looked up to expand
 * it and again to type it), and a search reads a name per type of that
 * kind: 56,000 for functions. The last few answers are kept. */
#define RECENT_NAMES 16

/* A probe wildcard over functions asks for thousands of names, each a walk
 * over every type: after this many searches the file's names are indexed
 * once (a hash table of name and kind), and each search is a probe. */
#define NAME_INDEX_AFTER 64

struct found_name {
	char *name;  /* NULL: an empty place */
	int kind;
	int id;      /* or -ENOENT */
};

struct btf_file {
	const struct btf_file *base;
	const unsigned char *data;   /* the whole blob */
	size_t size;
	bool mapped;                 /* data is a mapping, else malloc'ed */
	const unsigned char *types;  /* the type section */
	const char *strings;         /* the string section */
	uint32_t strings_length;
	uint32_t first_id;           /* 1, or the base's type count */
	uint32_t first_string;       /* 0, or where the base's strings end */
	uint32_t *checkpoints;       /* type first_id + STRIDE * i starts at types + checkpoints[i] */
	uint32_t own_count;
	VEC(uint32_t) enum_ids;      /* the enum and enum64 types, in id order */
	VEC(uint32_t) enum_offsets;  /* and where each starts in the type section */
	struct found_name recent[RECENT_NAMES]; /* the last name searches' answers */
	uint32_t recent_next;
	uint32_t searches;           /* walks search_name made; NAME_INDEX_AFTER builds the index */
	uint32_t *name_index;        /* own index + 1 of the lowest id of each name and kind,
				      * by hash (0: empty); NULL until built */
	uint32_t name_index_mask;
	uint32_t *enumerator_hashes; /* of each enumerator of enum_ids' types in turn; NULL
				      * until first asked */
	struct btf *libbpf_view;
	char *path;                  /* where it was read from, NULL from memory */
};

static const struct btf_type void_type;

/* What each kind adds to the 12-byte `struct btf_type`: fixed bytes, and
 * bytes per vlen item. A table, not a switch: the walks over all types
 * would mispredict a branch on every other record. Kinds past the table,
 * and UNKN, have no records. */
static const struct {
	uint8_t fixed, per_item;
	bool known;
} kind_layout[] = {
	[BTF_KIND_INT] = { 4, 0, true },
	[BTF_KIND_PTR] = { 0, 0, true },
	[BTF_KIND_ARRAY] = { sizeof(struct btf_array), 0, true },
	[BTF_KIND_STRUCT] = { 0, sizeof(struct btf_member), true },
	[BTF_KIND_UNION] = { 0, sizeof(struct btf_member), true },
	[BTF_KIND_ENUM] = { 0, sizeof(struct btf_enum), true },
	[BTF_KIND_FWD] = { 0, 0, true },
	[BTF_KIND_TYPEDEF] = { 0, 0, true },
	[BTF_KIND_VOLATILE] = { 0, 0, true },
	[BTF_KIND_CONST] = { 0, 0, true },
	[BTF_KIND_RESTRICT] = { 0, 0, true },
	[BTF_KIND_FUNC] = { 0, 0, true },
	[BTF_KIND_FUNC_PROTO] = { 0, sizeof(struct btf_param), true },
	[BTF_KIND_VAR] = { sizeof(struct btf_var), 0, true },
	[BTF_KIND_DATASEC] = { 0, sizeof(struct btf_var_secinfo), true },
	[BTF_KIND_FLOAT] = { 0, 0, true },
	[BTF_KIND_DECL_TAG] = { sizeof(struct btf_decl_tag), 0, true },
	[BTF_KIND_TYPE_TAG] = { 0, 0, true },
	[BTF_KIND_ENUM64] = { 0, sizeof(struct btf_enum64), true },
};

#define KIND_COUNT (sizeof(kind_layout) / sizeof(kind_layout[0]))

/* Length of the record at t, of a kind the first walk found known. */
static size_t record_length(const struct btf_type *t)
{
	unsigned kind = btf_kind(t);
	return sizeof(*t) + kind_layout[kind].fixed + (size_t)btf_vlen(t) * kind_layout[kind].per_item;
}

/* The same for a record not checked yet, whose data ends at most room
 * bytes from t; 0 for an unknown kind or a record that does not fit. */
static size_t checked_record_length(const struct btf_type *t, size_t room)
{
	if (room < sizeof(*t) || btf_kind(t) >= KIND_COUNT || !kind_layout[btf_kind(t)].known)
		return 0;
	size_t length = record_length(t);
	return length <= room ? length : 0;
}

/* Checks the header and sections and indexes the types. */
static int file_index(struct btf_file *file)
{
	const struct btf_header *header = (const struct btf_header *)file->data;

	if (file->size < sizeof(*header) || header->magic != BTF_MAGIC || header->version != BTF_VERSION ||
	    header->hdr_len < sizeof(*header) || header->hdr_len > file->size)
		return -EINVAL;
	size_t body = file->size - header->hdr_len;
	if ((uint64_t)header->type_off + header->type_len > body ||
	    (uint64_t)header->str_off + header->str_len > body || header->type_off % 4 != 0 ||
	    header->str_len == 0)
		return -EINVAL;
	file->types = file->data + header->hdr_len + header->type_off;
	file->strings = (const char *)file->data + header->hdr_len + header->str_off;
	file->strings_length = header->str_len;
	if (file->strings[file->strings_length - 1] != '\0')
		return -EINVAL;
	if (file->base) {
		file->first_id = btf_file_type_count(file->base);
		file->first_string = file->base->first_string + file->base->strings_length;
	} else {
		if (file->strings[0] != '\0')
			return -EINVAL; /* offset 0 is the empty name */
		file->first_id = 1;
	}
	/* a record is 12 bytes at least: room for all, touched only as used */
	file->checkpoints = xmalloc((header->type_len / sizeof(struct btf_type) / CHECKPOINT_STRIDE + 1) *
				    sizeof(uint32_t));
	for (size_t at = 0; at < header->type_len;) {
		const struct btf_type *t = (const struct btf_type *)(file->types + at);
		size_t length = checked_record_length(t, header->type_len - at);
		if (length == 0)
			return -EINVAL;
		if (btf_is_enum(t) || btf_is_enum64(t)) {
			vec_push(&file->enum_ids, file->first_id + file->own_count);
			vec_push(&file->enum_offsets, (uint32_t)at);
		}
		if (file->own_count % CHECKPOINT_STRIDE == 0)
			file->checkpoints[file->own_count / CHECKPOINT_STRIDE] = (uint32_t)at;
		file->own_count++;
		at += length;
	}
	return 0;
}

static int file_new(const unsigned char *data, size_t size, bool mapped, const struct btf_file *base,
		    struct btf_file **out)
{
	struct btf_file *file = xcalloc(1, sizeof(*file));
	int err;

	file->base = base;
	file->data = data;
	file->size = size;
	file->mapped = mapped;
	err = file_index(file);
	if (err < 0) {
		btf_file_free(file);
		return err;
	}
	*out = file;
	return 0;
}

/* The whole file by read(): sysfs hands out at most a page per call. */
static int read_whole(int fd, unsigned char **data, size_t *size)
{
	size_t capacity = 1 << 20, length = 0;
	unsigned char *buffer = xmalloc(capacity);

	for (;;) {
		if (length == capacity) {
			capacity *= 2;
			buffer = xrealloc(buffer, capacity);
		}
		ssize_t got = read(fd, buffer + length, capacity - length);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int err = -errno;
			free(buffer);
			return err;
		}
		if (got == 0)
			break;
		length += (size_t)got;
	}
	*data = buffer;
	*size = length;
	return 0;
}

int btf_file_open(const char *path, const struct btf_file *base, struct btf_file **out)
{
	struct stat status;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
	/* Kernels from 6.16 let the vmlinux file be mapped: no copy at all. */
	if (fstat(fd, &status) == 0 && status.st_size > 0) {
		void *mapping = mmap(NULL, (size_t)status.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (mapping != MAP_FAILED) {
			close(fd);
			err = file_new(mapping, (size_t)status.st_size, true, base, out);
			if (err == 0)
				(*out)->path = xstrdup(path);
			return err;
		}
	}
	unsigned char *data = NULL;
	size_t size = 0;
	err = read_whole(fd, &data, &size);
	close(fd);
	if (err < 0)
		return err;
	err = file_new(data, size, false, base, out);
	if (err == 0)
		(*out)->path = xstrdup(path);
	return err;
}

int btf_file_from_memory(const void *data, size_t size, const struct btf_file *base,
			 struct btf_file **out)
{
	unsigned char *copy = xmalloc(size ? size : 1);

	memcpy(copy, data, size);
	return file_new(copy, size, false, base, out);
}

void btf_file_free(struct btf_file *file)
{
	if (!file)
		return;
	btf__free(file->libbpf_view);
	if (file->mapped)
		munmap((void *)file->data, file->size);
	else
		free((void *)file->data);
	free(file->checkpoints);
	free(file->enum_ids.items);
	free(file->enum_offsets.items);
	for (int i = 0; i < RECENT_NAMES; i++)
		free(file->recent[i].name);
	free(file->enumerator_hashes);
	free(file->name_index);
	free(file->path);
	free(file);
}

uint32_t btf_file_type_count(const struct btf_file *file)
{
	return file->first_id + file->own_count;
}

uint32_t btf_file_first_id(const struct btf_file *file)
{
	return file->first_id;
}

const struct btf_type *btf_file_type(const struct btf_file *file, uint32_t id)
{
	if (id == 0)
		return &void_type;
	if (id < file->first_id)
		return file->base ? btf_file_type(file->base, id) : NULL;
	uint32_t own = id - file->first_id;
	if (own >= file->own_count)
		return NULL;
	const unsigned char *at = file->types + file->checkpoints[own / CHECKPOINT_STRIDE];
	for (uint32_t step = own % CHECKPOINT_STRIDE; step > 0; step--)
		at += record_length((const struct btf_type *)at);
	return (const struct btf_type *)at;
}

const char *btf_file_name(const struct btf_file *file, uint32_t offset)
{
	if (offset < file->first_string)
		return file->base ? btf_file_name(file->base, offset) : NULL;
	if (offset - file->first_string >= file->strings_length)
		return NULL;
	return file->strings + (offset - file->first_string);
}

static int search_name(const struct btf_file *file, const char *name, int kind);
static void build_name_index(struct btf_file *file);
static int indexed_name(const struct btf_file *file, const char *name, int kind);
static uint32_t name_hash(const char *name);

int btf_file_find(const struct btf_file *file, const char *name, int kind)
{
	struct btf_file *mutable = (struct btf_file *)file;

	if (kind == BTF_KIND_UNKN || strcmp(name, "void") == 0)
		return 0;
	if (file->base) {
		int id = btf_file_find(file->base, name, kind);
		if (id > 0)
			return id;
	}
	for (int i = 0; i < RECENT_NAMES; i++) {
		const struct found_name *found = &file->recent[i];
		if (found->name && found->kind == kind && strcmp(found->name, name) == 0)
			return found->id;
	}
	if (!file->name_index && ++mutable->searches > NAME_INDEX_AFTER)
		build_name_index(mutable);
	struct found_name *slot = &mutable->recent[mutable->recent_next++ % RECENT_NAMES];
	free(slot->name);
	*slot = (struct found_name){ .name = xstrdup(name), .kind = kind,
				     .id = file->name_index ? indexed_name(file, name, kind)
							    : search_name(file, name, kind) };
	return slot->id;
}

static uint32_t name_kind_hash(const char *name, int kind)
{
	return name_hash(name) * 31u + (uint32_t)kind;
}

/* One walk over the records; ids go up, so the first of a name and kind
 * to take its place is the lowest, as search_name finds. */
static void build_name_index(struct btf_file *file)
{
	uint32_t size = 1;
	const unsigned char *at = file->types;

	while (size < 2 * file->own_count + 2)
		size <<= 1;
	file->name_index = xcalloc(size, sizeof(uint32_t));
	file->name_index_mask = size - 1;
	for (uint32_t own = 0; own < file->own_count; own++) {
		const struct btf_type *t = (const struct btf_type *)at;
		const char *name = btf_file_name(file, t->name_off);
		int kind = (int)btf_kind(t);

		at += record_length(t);
		if (!name || !*name)
			continue;
		for (uint32_t place = name_kind_hash(name, kind) & file->name_index_mask;;
		     place = (place + 1) & file->name_index_mask) {
			uint32_t there = file->name_index[place];
			if (!there) {
				file->name_index[place] = own + 1;
				break;
			}
			const struct btf_type *other = btf_file_type(file, file->first_id + there - 1);
			if ((int)btf_kind(other) == kind &&
			    strcmp(btf_file_name(file, other->name_off), name) == 0)
				break;
		}
	}
}

/* search_name's answer, from the index. */
static int indexed_name(const struct btf_file *file, const char *name, int kind)
{
	for (uint32_t place = name_kind_hash(name, kind) & file->name_index_mask;;
	     place = (place + 1) & file->name_index_mask) {
		uint32_t there = file->name_index[place];
		if (!there)
			return -ENOENT;
		uint32_t id = file->first_id + there - 1;
		const struct btf_type *t = btf_file_type(file, id);
		const char *type_name = btf_file_name(file, t->name_off);
		if ((int)btf_kind(t) == kind && type_name && strcmp(type_name, name) == 0)
			return (int)id;
	}
}

/* The lowest id of this file's own types of `kind` named name. */
static int search_name(const struct btf_file *file, const char *name, int kind)
{
	/* Each record's place depends on the one before; walking SEARCH_LANES
	 * stretches between checkpoints side by side lets the loads overlap
	 * (one walk from the start is several times slower). In a group of
	 * stretches the lowest matching id wins; groups go in id order. */
	uint32_t stretches = (file->own_count + CHECKPOINT_STRIDE - 1) / CHECKPOINT_STRIDE;
	for (uint32_t group = 0; group < stretches; group += SEARCH_LANES) {
		const unsigned char *at[SEARCH_LANES];
		uint32_t lanes = stretches - group < SEARCH_LANES ? stretches - group : SEARCH_LANES;
		int found = -ENOENT;
		for (uint32_t lane = 0; lane < lanes; lane++)
			at[lane] = file->types + file->checkpoints[group + lane];
		for (uint32_t step = 0; step < CHECKPOINT_STRIDE; step++) {
			for (uint32_t lane = 0; lane < lanes; lane++) {
				uint32_t own = (group + lane) * CHECKPOINT_STRIDE + step;
				if (own >= file->own_count)
					continue;
				const struct btf_type *t = (const struct btf_type *)at[lane];
				at[lane] += record_length(t);
				if ((int)btf_kind(t) != kind)
					continue;
				const char *type_name = btf_file_name(file, t->name_off);
				int id = (int)(file->first_id + own);
				if (type_name && strcmp(type_name, name) == 0 && (found < 0 || id < found))
					found = id;
			}
		}
		if (found > 0)
			return found;
	}
	return -ENOENT;
}

long btf_file_resolve_size(const struct btf_file *file, uint32_t id)
{
	const struct btf_type *t = btf_file_type(file, id);
	uint64_t elements = 1;

	for (int depth = 0; depth < RESOLVE_DEPTH_MAX && t && t != &void_type; depth++) {
		switch (btf_kind(t)) {
		case BTF_KIND_INT:
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
		case BTF_KIND_ENUM:
		case BTF_KIND_ENUM64:
		case BTF_KIND_DATASEC:
		case BTF_KIND_FLOAT:
			elements *= t->size;
			return elements > UINT32_MAX ? -E2BIG : (long)elements;
		case BTF_KIND_PTR:
			elements *= sizeof(void *);
			return elements > UINT32_MAX ? -E2BIG : (long)elements;
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_VAR:
		case BTF_KIND_DECL_TAG:
		case BTF_KIND_TYPE_TAG:
			t = btf_file_type(file, t->type);
			break;
		case BTF_KIND_ARRAY:
			elements *= btf_array(t)->nelems;
			if (elements > UINT32_MAX)
				return -E2BIG;
			t = btf_file_type(file, btf_array(t)->type);
			break;
		default:
			return -EINVAL;
		}
	}
	return -EINVAL;
}

/* ---- enumerators ---- */

static uint32_t name_hash(const char *name)
{
	uint32_t hash = 2166136261u; /* FNV-1a */

	for (; *name; name++)
		hash = (hash ^ (unsigned char)*name) * 16777619u;
	return hash ? hash : 1; /* 0 marks an empty slot */
}

static const char *enumerator_name(const struct btf_file *file, const struct btf_type *t, uint32_t index)
{
	uint32_t offset = btf_is_enum(t) ? btf_enum(t)[index].name_off : btf_enum64(t)[index].name_off;
	return btf_file_name(file, offset);
}

static const struct btf_type *enum_record(const struct btf_file *file, int i)
{
	return (const struct btf_type *)(file->types + file->enum_offsets.items[i]);
}

/* Hashes are written in one sequential pass and searched by a linear scan
 * of 19,000 integers: a hash table of slots, written and probed at
 * random, cost several times more in cache misses than the scans do for
 * the few dozen constants a program names. */
static void hash_enumerators(struct btf_file *file)
{
	uint32_t count = 0;

	for (int i = 0; i < file->enum_ids.count; i++)
		count += btf_vlen(enum_record(file, i));
	file->enumerator_hashes = xmalloc((count ? count : 1) * sizeof(uint32_t));
	count = 0;
	for (int i = 0; i < file->enum_ids.count; i++) {
		const struct btf_type *t = enum_record(file, i);
		for (uint32_t e = 0; e < btf_vlen(t); e++) {
			const char *name = enumerator_name(file, t, e);
			file->enumerator_hashes[count++] = name ? name_hash(name) : 0;
		}
	}
}

int btf_file_enum_constant(struct btf_file *file, const char *name, int *index)
{
	if (file->base) {
		int id = btf_file_enum_constant((struct btf_file *)file->base, name, index);
		if (id > 0)
			return id;
	}
	if (!file->enumerator_hashes)
		hash_enumerators(file);
	uint32_t hash = name_hash(name), ordinal = 0;
	/* in id order: the lowest id wins, as a search with libbpf finds */
	for (int i = 0; i < file->enum_ids.count; i++) {
		const struct btf_type *t = enum_record(file, i);
		for (uint32_t e = 0; e < btf_vlen(t); e++, ordinal++) {
			if (file->enumerator_hashes[ordinal] != hash)
				continue;
			const char *candidate = enumerator_name(file, t, e);
			if (candidate && strcmp(candidate, name) == 0) {
				*index = (int)e;
				return (int)file->enum_ids.items[i];
			}
		}
	}
	return -ENOENT;
}

struct btf *btf_file_libbpf(const struct btf_file *file)
{
	struct btf_file *mutable = (struct btf_file *)file;

	if (!mutable->libbpf_view) {
		if (file->base) {
			/* Debian's libbpf 1.1 does not export btf__new_split */
			struct btf *base = btf_file_libbpf(file->base);
			if (base && file->path)
				mutable->libbpf_view = btf__parse_raw_split(file->path, base);
		} else {
			mutable->libbpf_view = btf__new(file->data, (uint32_t)file->size);
		}
	}
	return mutable->libbpf_view;
}
