/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading /proc/PID/maps. The file is read whole first (it changes while a
 * process runs, and a line-at-a-time read could see two versions), then
 * parsed line by line; a line that does not parse is skipped, since a
 * kernel may add fields at the end.
 */
#include "kernel/procmaps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A map of a big process runs to a few MiB. */
#define PROC_MAPS_SIZE_MAX (64u << 20)

int proc_maps_read(pid_t pid, proc_mapping_list *out)
{
	char path[64];
	char *text;
	size_t length;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	int err = read_path_bounded(path, PROC_MAPS_SIZE_MAX, &text, &length);
	if (err)
		return err;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct proc_mapping mapping = { 0 };
		int name_at = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %lx:%lx %lu %n",
			   &mapping.start, &mapping.end, mapping.perms, &mapping.offset,
			   &mapping.major, &mapping.minor, &mapping.inode, &name_at) < 7)
			continue;
		mapping.path = xstrdup(name_at ? line + name_at : "");
		vec_push(out, mapping);
	}
	free(text);
	return 0;
}

void proc_maps_free(proc_mapping_list *list)
{
	for (int i = 0; i < list->count; i++)
		free(list->items[i].path);
	free(list->items);
	list->items = NULL;
	list->count = list->capacity = 0;
}
