/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup v2 directories: the id the kernel gives a cgroup, which BPF's
 * bpf_get_current_cgroup_id() (sonde's `cgroup`) returns for a task in it.
 * The tools' -c/--cgroup PATH options resolve their path here once, so the
 * program compares against a constant.
 */
#ifndef SONDE_CGROUP_H
#define SONDE_CGROUP_H

#include <stdint.h>

/* The id of the cgroup v2 directory at path: 0, or -ENOENT, -ENOTDIR,
 * -EMEDIUMTYPE (not on a cgroup v2 file system) or another -errno. */
int cgroup_id_of_path(const char *path, uint64_t *id);

#endif
