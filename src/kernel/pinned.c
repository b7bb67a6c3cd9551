/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pinned maps (see pinned.h): bpf_obj_get() on the path, then the map's
 * own description (bpf_obj_get_info_by_fd) to refuse a map that cannot be
 * looked up by the key the program builds: a hash map with keys of another
 * size, or an object that is a program or a link rather than a map.
 */
#include "pinned.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "../common/util.h"

static bool pinned_is_hash(uint32_t type)
{
	return type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_LRU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

int pinned_map_open(const char *path, uint32_t key_size, char **error)
{
	int fd = bpf_obj_get(path);
	if (fd < 0) {
		int err = errno;
		*error = xasprintf("'%s' is not a pinned BPF map (%s)", path, strerror(err));
		return -err;
	}
	struct bpf_map_info info;
	uint32_t length = sizeof(info);
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &length) != 0) {
		int err = errno;
		*error = xasprintf("'%s' is not a pinned BPF map (%s)", path, strerror(err));
		close(fd);
		return -err;
	}
	if (!pinned_is_hash(info.type) || info.key_size != key_size) {
		const char *type = libbpf_bpf_map_type_str(info.type);
		*error = xasprintf("the map pinned at '%s' must be a hash map with %u-byte keys, not "
				   "a %s map with %u-byte keys", path, key_size, type ? type : "?",
				   info.key_size);
		close(fd);
		return -EINVAL;
	}
	return fd;
}
