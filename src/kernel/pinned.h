/* SPDX-License-Identifier: Apache-2.0 */
/*
 * BPF maps pinned in a BPF file system by someone else: BCC's
 * --cgroupmap/--mntnsmap convention, a hash map of 8-byte ids (cgroup ids,
 * mount namespace ids) that a container runtime keeps up to date. sonde
 * only looks keys up in it; it never creates, fills or unpins one.
 */
#ifndef SONDE_PINNED_H
#define SONDE_PINNED_H

#include <stdint.h>

/* Opens the map pinned at path and checks that it is a hash map with
 * key_size-byte keys: its fd, or -errno with *error set to a sentence that
 * names the path (the caller frees it). */
int pinned_map_open(const char *path, uint32_t key_size, char **error);

#endif
