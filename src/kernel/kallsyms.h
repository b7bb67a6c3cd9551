/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /proc/kallsyms: the kernel's symbol table, one "address type name" line
 * per symbol ("\t[module]" after module symbols). The one reader and parser
 * of it; the symbolizer (runtime/symbols.c) and kaddr()/kprobe checks use it.
 */
#ifndef SONDE_KALLSYMS_H
#define SONDE_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One line; the strings point into it. */
struct kallsyms_line {
	uint64_t address;    /* 0 when kptr_restrict hides addresses from this user */
	char type;           /* 'T', 't', 'a' (absolute: an offset, not an address), ... */
	const char *name;
	size_t name_length;
	const char *module;  /* NULL in the kernel image */
	size_t module_length;
};

/* false for a line that is not a symbol line. */
bool kallsyms_parse_line(const char *line, struct kallsyms_line *out);

/* Calls visit for every symbol line of path (NULL: /proc/kallsyms), in the
 * file's order, read a line at a time (the file is 5 MB and more). The one
 * place that opens it. 0, or -errno when it cannot be opened. */
int kallsyms_each(const char *path, void (*visit)(const struct kallsyms_line *line, void *context),
		  void *context);

/* Address of a kernel symbol from /proc/kallsyms, for kaddr() and kprobe
 * checks: 0, -ENOENT, -EACCES (addresses hidden) or another -errno. The
 * file is read once, at the first lookup, and kept sorted by name. */
int kallsyms_lookup(const char *symbol, unsigned long long *address);

#endif
