/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Names of JIT-compiled code from a perf map file, /tmp/perf-PID.map.
 *
 * Code a JIT generates lives in anonymous memory, where no ELF file says
 * what is what. The convention perf introduced, and that Java agents,
 * Node's --perf-basic-prof, Python 3.12's perf trampoline and LuaJIT
 * follow, is that the process appends one line per piece of code it
 * generates to /tmp/perf-PID.map:
 *
 *     START SIZE name of the code
 *
 * START and SIZE in hex without 0x; the name is the rest of the line and
 * may hold spaces. Lines are appended while the process runs, in no
 * particular order, and a range can be reused for new code after the old
 * is freed: the line written last wins.
 */
#ifndef SONDE_PERF_MAP_H
#define SONDE_PERF_MAP_H

#include <stdint.h>

struct perf_map;

/* A map read from path (nothing is read until the first lookup; the file
 * need not exist yet). */
struct perf_map *perf_map_new(const char *path);
void perf_map_free(struct perf_map *map);

/* Reads the lines added since the last read; all of them again when the
 * file was replaced. A file that is gone keeps what was read before. */
void perf_map_refresh(struct perf_map *map);

/* The code holding address: its name (valid until the map is freed) and the
 * offset into it. 0, or -ENOENT when no line covers address. Does not
 * re-read the file: call perf_map_refresh() first when it may have grown. */
int perf_map_lookup(const struct perf_map *map, uint64_t address, const char **name,
		    uint64_t *offset);

/* The file's path, as given to perf_map_new(). */
const char *perf_map_path(const struct perf_map *map);

#endif
