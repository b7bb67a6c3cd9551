/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A BTF blob as the kernel exports it (/sys/kernel/btf/vmlinux, or a
 * module's split BTF on top of it), read in place.
 *
 * libbpf's btf__new copies the 5 MB vmlinux BTF and checks every one of
 * its types before answering anything: some 20 ms of a tool's start-up,
 * for programs that then ask about a handful of types. This reader maps
 * the file, notes where every 16th type starts (one walk over the type
 * headers) and answers from the mapped bytes. The answers are libbpf's:
 * the same ids, the same first match of a name search, a split file's ids
 * and string offsets continuing its base's. Types are the kernel's own
 * `struct btf_type` records, so libbpf's inline helpers (btf_kind,
 * btf_members, ...) read them.
 *
 * Functions return 0, an id, or a negative errno; they never print.
 */
#ifndef SONDE_BTF_FILE_H
#define SONDE_BTF_FILE_H

#include <stddef.h>
#include <stdint.h>

struct btf;
struct btf_type;
struct btf_file;

/* Reads the BTF file at path (mapped where the kernel allows it, else
 * read); base is NULL, or the BTF a module's split file extends. */
int btf_file_open(const char *path, const struct btf_file *base, struct btf_file **out);

/* The same over a copy of size bytes at data. */
int btf_file_from_memory(const void *data, size_t size, const struct btf_file *base,
			 struct btf_file **out);

void btf_file_free(struct btf_file *file);

/* Number of type ids, 0 (void) and the base's included, as btf__type_cnt. */
uint32_t btf_file_type_count(const struct btf_file *file);

/* The first id that belongs to this file (1, or the base's count). */
uint32_t btf_file_first_id(const struct btf_file *file);

/* Type `id` (base ids answered by the base): for 0 a zeroed record (kind
 * UNKN, void), as libbpf gives; NULL out of range. */
const struct btf_type *btf_file_type(const struct btf_file *file, uint32_t id);

/* The string at offset (a base offset answered by the base); NULL when out
 * of range. */
const char *btf_file_name(const struct btf_file *file, uint32_t offset);

/* The lowest id of a type of `kind` named name, base first, as
 * btf__find_by_name_kind; -ENOENT when there is none. */
int btf_file_find(const struct btf_file *file, const char *name, int kind);

/* The size in bytes of a value of type id (through typedefs, qualifiers
 * and arrays), as btf__resolve_size; negative errno when it has none. */
long btf_file_resolve_size(const struct btf_file *file, uint32_t id);

/* The enum (or enum64) type with the lowest id that has an enumerator
 * named name, and that enumerator's index; -ENOENT when none has. The
 * first call indexes every enumerator by name. */
int btf_file_enum_constant(struct btf_file *file, const char *name, int *index);

/* A libbpf view of the same BTF, made on first call (for btf_dump, which
 * -lv uses); NULL if libbpf rejects it, and for a split file made from
 * memory (its view is read from its path). Owned by file. */
struct btf *btf_file_libbpf(const struct btf_file *file);

#endif
