/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the object files that user-space probes attach to: executables
 * and shared libraries on disk.
 *
 * A uprobe is placed at a file offset, not at an address, so the one fact
 * everything here comes down to is "which byte of the file holds this
 * instruction". Symbols give link-time virtual addresses; the program
 * headers say which part of the file each loadable segment maps, and that
 * turns an address into an offset the same way for PIE executables, fixed
 * executables and shared libraries.
 *
 * USDT probes are described by `.note.stapsdt` notes (see <sys/sdt.h>):
 * the probe's address, the address of the `.stapsdt.base` section when the
 * note was written (so a prelinked or otherwise moved object can be
 * corrected), the address of its semaphore, and an argument string in the
 * assembler's operand syntax.
 *
 * Finding objects: a library written by name ("libc") is looked up the way
 * the dynamic linker would, in /etc/ld.so.cache and then in the standard
 * directories; with a pid, the objects mapped into that process come from
 * /proc/PID/maps, opened through /proc/PID/root so that a process in
 * another mount namespace (a container) is read correctly; objects built
 * in memory and mapped from a memfd, through /proc/PID/map_files/.
 *
 * Nothing here prints: failures return -errno and, where a caller would
 * otherwise have to guess, a sentence in *error.
 */
#ifndef SONDE_ELF_H
#define SONDE_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/util.h"

struct elf_object;

/* One defined symbol: its name, link-time address and size in bytes. */
struct elf_symbol {
	char *name;
	uint64_t address;
	uint64_t size;
};
typedef VEC(struct elf_symbol) elf_symbol_list;

/* One `.note.stapsdt` probe, addresses already corrected for .stapsdt.base. */
struct stapsdt_note {
	char *provider;
	char *name;
	char *arguments;       /* "-4@%edi 8@-8(%rbp)"; "" when the probe has none */
	uint64_t pc;           /* link-time address of the probe's nop */
	uint64_t base;         /* .stapsdt.base as recorded in the note */
	uint64_t semaphore;    /* link-time address of the semaphore, 0 if none */
};
typedef VEC(struct stapsdt_note) stapsdt_note_list;

typedef VEC(char *) path_list;

/* Opens an ELF file for reading. 0, or -errno with a sentence in *error
 * ("/x: no such file", "/x is not an ELF file"). */
int elf_object_open(const char *path, struct elf_object **out, char **error);
/* Reads an ELF image that is already in memory (the vDSO), from a copy
 * made here; name stands for its path in messages. 0 or -errno. */
int elf_object_open_memory(const void *image, size_t size, const char *name,
			   struct elf_object **out, char **error);
void elf_object_close(struct elf_object *object);
/* ET_DYN (PIE executables and shared libraries) rather than ET_EXEC. */
bool elf_object_is_relocatable(const struct elf_object *object);

/* Appends every defined function symbol with a non-zero size, from .symtab
 * and .dynsym (and a stripped object's separate debug file, found by build
 * ID under /usr/lib/debug), sorted by name, each name once (the lowest
 * address). */
int elf_object_functions(struct elf_object *object, elf_symbol_list *out);
/* Calls visit for every function symbol of the tables elf_object_functions()
 * reads, without copying, sorting or dropping anything: the name is valid
 * during the call only, and a function in both .symtab and .dynsym comes
 * twice. For reading a big table once and keeping a few of its names. */
typedef void (*elf_function_visit)(const char *name, uint64_t address, uint64_t size,
				   void *context);
void elf_object_foreach_function(struct elf_object *object, elf_function_visit visit,
				 void *context);
/* Finds a defined symbol of any type by exact name. 0 or -ENOENT. */
int elf_object_find_symbol(struct elf_object *object, const char *name, struct elf_symbol *out);
/* Converts a link-time virtual address to the file offset that holds it,
 * through the PT_LOAD program headers. 0 or -ENOENT when no segment maps it. */
int elf_object_address_to_offset(struct elf_object *object, uint64_t address, uint64_t *offset);
/* The other way: the link-time address a loadable segment maps the byte
 * at file offset to. 0 or -ENOENT. */
int elf_object_offset_to_address(struct elf_object *object, uint64_t offset, uint64_t *address);
/* Whether address is in an executable segment's file-backed part. */
bool elf_object_address_is_code(const struct elf_object *object, uint64_t address);
/* Appends the object's USDT probes (none: returns 0 with nothing added). */
int elf_object_stapsdt_notes(struct elf_object *object, stapsdt_note_list *out);

void elf_symbol_list_free(elf_symbol_list *list);
void stapsdt_note_list_free(stapsdt_note_list *list);
void path_list_free(path_list *list);

/*
 * Looks a library up in the bytes of an ld.so.cache file: the first entry
 * for this machine (x86-64, libc6) whose name starts with `name` followed by
 * ".so" ("libc" finds "libc.so.6"), or whose name is exactly `name`. Returns
 * 0 with a malloc'd path, -ENOENT if none, -EINVAL if the data is not a
 * cache this code understands.
 */
int elf_ld_cache_lookup(const void *data, size_t length, const char *name, char **path);

/*
 * Resolves the object a uprobe or usdt spec names, the way bpftrace does:
 * a name with a '/' is a path; otherwise a library from ld.so.cache or the
 * standard library directories, then one mapped into pid (when pid > 0),
 * then an executable on $PATH, and last "lib" + name as a library (BCC's
 * shorthand: "c" is libc). 0 with a malloc'd path; -ENOENT otherwise.
 */
int elf_resolve_binary(const char *name, pid_t pid, char **path);

/* Appends the distinct files mapped executable into pid, as paths that can
 * be opened from here ("/proc/PID/root/usr/lib/..."); an object mapped from
 * a memfd ("/memfd:NAME (deleted)") as "/proc/PID/map_files/START-END",
 * which both opens it and names it to a uprobe. 0 or -errno. */
int elf_process_objects(pid_t pid, path_list *out);

#endif
