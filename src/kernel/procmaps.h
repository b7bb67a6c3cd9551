/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /proc/PID/maps: a process's mappings, one "start-end perms offset
 * major:minor inode path" line each. The one reader of it, for the user
 * symbolizer (runtime/symbols.c), the objects a process has mapped
 * (elf.c), and sonde's own mappings (features.c, elf.c).
 */
#ifndef SONDE_PROCMAPS_H
#define SONDE_PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/util.h"

struct proc_mapping {
	uint64_t start, end;    /* [start, end) */
	char perms[5];          /* "r-xp" */
	uint64_t offset;        /* the file offset mapped at start */
	unsigned long major, minor;
	unsigned long inode;    /* 0: not a file (anonymous, [vdso], [stack]) */
	char *path;             /* as the kernel shows it: "/usr/lib/x.so", "[vdso]",
				 * "/memfd:name (deleted)"; "" for none */
};

typedef VEC(struct proc_mapping) proc_mapping_list;

/* Reads pid's mappings (0: sonde's own) into *out, in address order.
 * 0, or -errno (-ENOENT: the process is gone). */
int proc_maps_read(pid_t pid, proc_mapping_list *out);
void proc_maps_free(proc_mapping_list *list);

static inline bool proc_mapping_executable(const struct proc_mapping *mapping)
{
	return mapping->perms[2] == 'x';
}

#endif
