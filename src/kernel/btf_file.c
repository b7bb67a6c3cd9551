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
 * Opening costs one walk over the type headers, to note where each record
 * starts; nothing is copied when the kernel lets the file be mapped.
 * Enumerator names are indexed in a hash table the first time a constant
 * is asked for, since a program may name dozens of them and each would
 * otherwise be a search through some 19,000.
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

struct enumerator_slot {
	uint32_t hash;      /* 0: empty */
	uint32_t type_id;
	uint32_t index;
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
	uint32_t *type_offsets;      /* type first_id + i starts at types + type_offsets[i] */
	uint32_t own_count;
	struct enumerator_slot *enumerators; /* NULL until first asked */
	uint32_t enumerator_mask;
	struct btf *libbpf_view;
	char *path;                  /* where it was read from, NULL from memory */
};

static const struct btf_type void_type;

/* Length of the record at t, whose kind data ends at most `room` bytes
 * from t; 0 for an unknown kind or a record that does not fit. */
static size_t record_length(const struct btf_type *t, size_t room)
{
	size_t length = sizeof(*t);
	size_t count = btf_vlen(t);

	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		length += sizeof(uint32_t);
		break;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		break;
	case BTF_KIND_ARRAY:
		length += sizeof(struct btf_array);
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		length += count * sizeof(struct btf_member);
		break;
	case BTF_KIND_ENUM:
		length += count * sizeof(struct btf_enum);
		break;
	case BTF_KIND_ENUM64:
		length += count * sizeof(struct btf_enum64);
		break;
	case BTF_KIND_FUNC_PROTO:
		length += count * sizeof(struct btf_param);
		break;
	case BTF_KIND_VAR:
		length += sizeof(struct btf_var);
		break;
	case BTF_KIND_DATASEC:
		length += count * sizeof(struct btf_var_secinfo);
		break;
	case BTF_KIND_DECL_TAG:
		length += sizeof(struct btf_decl_tag);
		break;
	default:
		return 0;
	}
	return length <= room ? length : 0;
}

/* Checks the header and sections and indexes the types. */
static int file_index(struct btf_file *file)
{
	const struct btf_header *header = (const struct btf_header *)file->data;
	VEC(uint32_t) offsets = { 0 };

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
	for (size_t at = 0; at < header->type_len;) {
		size_t room = header->type_len - at;
		size_t length = room >= sizeof(struct btf_type)
				? record_length((const struct btf_type *)(file->types + at), room) : 0;
		if (length == 0) {
			free(offsets.items);
			return -EINVAL;
		}
		vec_push(&offsets, (uint32_t)at);
		at += length;
	}
	file->type_offsets = offsets.items;
	file->own_count = (uint32_t)offsets.count;
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
	free(file->type_offsets);
	free(file->enumerators);
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
	if (id - file->first_id >= file->own_count)
		return NULL;
	return (const struct btf_type *)(file->types + file->type_offsets[id - file->first_id]);
}

const char *btf_file_name(const struct btf_file *file, uint32_t offset)
{
	if (offset < file->first_string)
		return file->base ? btf_file_name(file->base, offset) : NULL;
	if (offset - file->first_string >= file->strings_length)
		return NULL;
	return file->strings + (offset - file->first_string);
}

int btf_file_find(const struct btf_file *file, const char *name, int kind)
{
	if (kind == BTF_KIND_UNKN || strcmp(name, "void") == 0)
		return 0;
	if (file->base) {
		int id = btf_file_find(file->base, name, kind);
		if (id > 0)
			return id;
	}
	for (uint32_t i = 0; i < file->own_count; i++) {
		const struct btf_type *t = (const struct btf_type *)(file->types + file->type_offsets[i]);
		if ((int)btf_kind(t) != kind)
			continue;
		const char *type_name = btf_file_name(file, t->name_off);
		if (type_name && strcmp(type_name, name) == 0)
			return (int)(file->first_id + i);
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

static void index_enumerators(struct btf_file *file)
{
	uint32_t count = 0, capacity = 64;

	for (uint32_t i = 0; i < file->own_count; i++) {
		const struct btf_type *t = (const struct btf_type *)(file->types + file->type_offsets[i]);
		if (btf_is_enum(t) || btf_is_enum64(t))
			count += btf_vlen(t);
	}
	while (capacity < 2 * count)
		capacity *= 2;
	file->enumerators = xcalloc(capacity, sizeof(*file->enumerators));
	file->enumerator_mask = capacity - 1;
	/* in id order, each name keeping its first place: the lowest id wins */
	for (uint32_t i = 0; i < file->own_count; i++) {
		const struct btf_type *t = (const struct btf_type *)(file->types + file->type_offsets[i]);
		if (!btf_is_enum(t) && !btf_is_enum64(t))
			continue;
		for (uint32_t e = 0; e < btf_vlen(t); e++) {
			const char *name = enumerator_name(file, t, e);
			if (!name)
				continue;
			uint32_t hash = name_hash(name);
			uint32_t slot = hash & file->enumerator_mask;
			bool seen = false;
			while (file->enumerators[slot].hash && !seen) {
				const struct enumerator_slot *taken = &file->enumerators[slot];
				seen = taken->hash == hash &&
				       strcmp(enumerator_name(file, btf_file_type(file, taken->type_id),
							      taken->index), name) == 0;
				slot = (slot + 1) & file->enumerator_mask;
			}
			if (!seen)
				file->enumerators[slot] = (struct enumerator_slot){
					.hash = hash, .type_id = file->first_id + i, .index = e };
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
	if (!file->enumerators)
		index_enumerators(file);
	uint32_t hash = name_hash(name);
	for (uint32_t slot = hash & file->enumerator_mask; file->enumerators[slot].hash;
	     slot = (slot + 1) & file->enumerator_mask) {
		const struct enumerator_slot *entry = &file->enumerators[slot];
		if (entry->hash != hash)
			continue;
		const struct btf_type *t = btf_file_type(file, entry->type_id);
		if (strcmp(enumerator_name(file, t, entry->index), name) == 0) {
			*index = (int)entry->index;
			return (int)entry->type_id;
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
