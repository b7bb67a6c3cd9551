/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A cgroup v2 directory's id. On cgroup2 (kernfs) the file handle that
 * name_to_handle_at() returns is the 64-bit cgroup id itself, the number
 * bpf_get_current_cgroup_id() gives for a task inside it (bpftrace's
 * cgroupid() reads it the same way). The directory is checked to be on a
 * cgroup2 mount first: on cgroup v1 or any other file system the handle is
 * something else, and a filter on it would silently match nothing.
 */
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

int cgroup_id_of_path(const char *path, uint64_t *id)
{
	struct statfs fs;
	struct stat st;
	if (statfs(path, &fs) != 0 || stat(path, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (fs.f_type != CGROUP2_SUPER_MAGIC)
		return -EMEDIUMTYPE;
	union {
		struct file_handle handle;
		char space[sizeof(struct file_handle) + sizeof(uint64_t)];
	} h;
	int mount_id;
	h.handle.handle_bytes = sizeof(uint64_t);
	if (name_to_handle_at(AT_FDCWD, path, &h.handle, &mount_id, 0) != 0)
		return -errno;
	if (h.handle.handle_bytes != sizeof(uint64_t))
		return -EMEDIUMTYPE;
	memcpy(id, h.handle.f_handle, sizeof(*id));
	return 0;
}
