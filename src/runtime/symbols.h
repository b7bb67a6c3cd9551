/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Addresses to names, for printing stacks, ksym() and usym().
 *
 * Kernel addresses come from /proc/kallsyms, read once on first use. User
 * addresses are looked up in the process they came from: /proc/PID/maps
 * says which object is mapped where, the object's ELF symbols (through
 * kernel/elf.c) say which function holds the file offset; the vDSO is read
 * from sonde's own copy and JIT code from /tmp/perf-PID.map. C++ and Rust
 * names come out demangled. Everything is cached for the life of the
 * process (or until symbols_free()).
 *
 * The printers have no program pointer, so the runtime registers the stack
 * map here once it has created it; stack ids read from maps and ring-buffer
 * records are looked up in that map.
 */
#ifndef SONDE_SYMBOLS_H
#define SONDE_SYMBOLS_H

#include <stdint.h>
#include <sys/types.h>

/* Frames a BPF_MAP_TYPE_STACK_TRACE value holds (the kernel's default,
 * PERF_MAX_STACK_DEPTH): unused slots at the end are zero. */
#define SYMBOLS_MAX_FRAMES 127

/* One resolved address. The strings belong to the cache and stay valid
 * until symbols_free(). */
struct symbol_lookup {
	const char *name;   /* function (kernel: any kallsyms symbol) */
	uint64_t offset;    /* address - start of the symbol */
	const char *module; /* user: the object's path as /proc/PID/maps shows it,
			     * "[vdso]", or the perf map's path for JIT code;
			     * kernel: the module's name ("ext4"), NULL for
			     * the kernel image itself */
};

/* The nearest kallsyms symbol at or below address. 0, or -ENOENT when
 * there is none (or kallsyms shows no addresses, as for non-root). */
int symbols_kernel(uint64_t address, struct symbol_lookup *out);
/* Names many kernel addresses at once (names[i]: the symbol holding
 * addresses[i], NULL if none), reading kallsyms twice rather than keeping
 * its whole table: for printing many stacks. With the table already loaded
 * (symbols_kernel() was used), from the table. The strings stay valid until
 * symbols_free(). */
void symbols_kernel_names(const uint64_t *addresses, int count, const char **names);
/* The function of process pid holding address. 0, or -ENOENT when the
 * process is gone (and was never looked at), the address is in no mapped
 * file, the vDSO or a perf map line, or no symbol covers it. -ENOENT is
 * what folded output prints as "[unknown]" (bpftrace-style output prints
 * the address). */
int symbols_user(pid_t pid, uint64_t address, struct symbol_lookup *out);
/* Names many user addresses at once, for printing many stacks: an object
 * whose table is not loaded yet has its symbols read once and only the
 * names holding these addresses kept (a profile of a busy machine touches
 * the tables of compilers and browsers: megabytes, for a few names each).
 * symbols_user() then answers for these addresses as it would have. */
struct symbols_user_address {
	pid_t pid;
	uint64_t address;
};
void symbols_user_batch(const struct symbols_user_address *addresses, int count);
/* Reads process pid's maps now (again, if it was seen before: it may have
 * exec'd) and loads the symbols of every object it maps, so that its
 * addresses can be named after it has exited. The runtime calls this when
 * a BPF program reports a process it has not seen before. 0, or -ENOENT
 * when the process is already gone. */
int symbols_user_prepare(pid_t pid);

/* Registers the program's stack map; -1 when it has none. */
void symbols_set_stack_map(int depth, int fd);
/* Reads the frames of a stack id into frames[SYMBOLS_MAX_FRAMES]. Returns
 * the number of frames (up to the first zero), or -errno: a negative id
 * (the kernel could not take the stack) is returned as is, -ENOENT when the
 * map has no such entry or no map is registered. */
int symbols_read_stack(int depth, int64_t stack_id, uint64_t *frames);

/* Reads kernel symbols from this file instead of /proc/kallsyms (tests);
 * NULL restores the default. Drops what was loaded before. */
void symbols_set_kallsyms_path(const char *path);
/* Drops every cache (kernel and user symbols). */
void symbols_free(void);

#endif
