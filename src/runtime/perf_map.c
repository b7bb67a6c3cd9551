/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading /tmp/perf-PID.map files (see perf_map.h for the format).
 *
 * The file only grows while its process runs, so a refresh reads from where
 * the last one stopped, up to the last complete line (a line being written
 * now is read next time). Each entry keeps the order it was read in.
 *
 * Entries are kept sorted by start, and prefix_end[i] is the largest end of
 * entries 0..i. A lookup finds the last entry starting at or below the
 * address and walks back only while some earlier entry could still reach
 * the address; of the entries covering it, the one read last wins. Ranges a
 * JIT reuses after freeing code overlap only their own successors, so the
 * walk is short.
 */
#include "runtime/perf_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

struct perf_map_entry {
	uint64_t start, size;
	uint64_t order; /* position in the file: later lines win */
	char *name;
};

struct perf_map {
	char *path;
	dev_t device;
	ino_t inode;
	off_t consumed;   /* bytes of complete lines read so far */
	VEC(struct perf_map_entry) entries;
	uint64_t *prefix_end;
	uint64_t next_order;
};

struct perf_map *perf_map_new(const char *path)
{
	struct perf_map *map = xcalloc(1, sizeof(*map));

	map->path = xstrdup(path);
	return map;
}

static void perf_map_clear(struct perf_map *map)
{
	for (int i = 0; i < map->entries.count; i++)
		free(map->entries.items[i].name);
	map->entries.count = 0;
	map->consumed = 0;
}

void perf_map_free(struct perf_map *map)
{
	if (!map)
		return;
	perf_map_clear(map);
	free(map->entries.items);
	free(map->prefix_end);
	free(map->path);
	free(map);
}

const char *perf_map_path(const struct perf_map *map)
{
	return map->path;
}

/* "START SIZE name": false for anything else (a torn or foreign line). */
static bool perf_map_parse_line(char *line, struct perf_map_entry *entry)
{
	char *cursor;

	entry->start = strtoull(line, &cursor, 16);
	if (cursor == line || *cursor != ' ')
		return false;
	line = cursor + 1;
	entry->size = strtoull(line, &cursor, 16);
	if (cursor == line || *cursor != ' ' || entry->size == 0)
		return false;
	line = cursor + 1;
	size_t length = strlen(line);
	if (length && line[length - 1] == '\r')
		length--;
	if (length == 0)
		return false;
	entry->name = xstrndup(line, length);
	return true;
}

static int perf_map_compare(const void *pa, const void *pb)
{
	const struct perf_map_entry *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->order > b->order) - (a->order < b->order);
}

/* Reads bytes [map->consumed, size) and takes their complete lines. */
static void perf_map_read_new(struct perf_map *map, int fd, off_t size)
{
	size_t wanted = (size_t)(size - map->consumed), got = 0;
	char *text = xmalloc(wanted + 1);

	while (got < wanted) {
		ssize_t n = pread(fd, text + got, wanted - got, map->consumed + (off_t)got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	text[got] = '\0';
	char *line = text;
	for (char *end; (end = memchr(line, '\n', text + got - line)); line = end + 1) {
		*end = '\0';
		struct perf_map_entry entry;
		if (perf_map_parse_line(line, &entry)) {
			entry.order = map->next_order++;
			vec_push(&map->entries, entry);
		}
	}
	map->consumed += line - text;
	free(text);
}

void perf_map_refresh(struct perf_map *map)
{
	struct stat st;

	/* one stat() when nothing changed, which is nearly always: the file
	 * is only opened when it grew or was replaced */
	if (stat(map->path, &st) < 0)
		return;
	bool replaced = st.st_dev != map->device || st.st_ino != map->inode ||
			st.st_size < map->consumed;
	if (!replaced && st.st_size == map->consumed && map->prefix_end)
		return;
	int fd = open(map->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return;
	}
	/* a new file under the same name (the pid was reused): start over */
	if (st.st_dev != map->device || st.st_ino != map->inode || st.st_size < map->consumed) {
		perf_map_clear(map);
		map->device = st.st_dev;
		map->inode = st.st_ino;
	}
	int before = map->entries.count;
	if (st.st_size > map->consumed)
		perf_map_read_new(map, fd, st.st_size);
	close(fd);
	if (map->entries.count == before && map->prefix_end)
		return;

	qsort(map->entries.items, (size_t)map->entries.count, sizeof(*map->entries.items),
	      perf_map_compare);
	free(map->prefix_end);
	map->prefix_end = xcalloc((size_t)map->entries.count + 1, sizeof(*map->prefix_end));
	uint64_t reach = 0;
	for (int i = 0; i < map->entries.count; i++) {
		const struct perf_map_entry *entry = &map->entries.items[i];
		uint64_t end = entry->start + entry->size < entry->start ? UINT64_MAX
				: entry->start + entry->size;
		if (end > reach)
			reach = end;
		map->prefix_end[i] = reach;
	}
}

int perf_map_lookup(const struct perf_map *map, uint64_t address, const char **name,
		    uint64_t *offset)
{
	int low = 0, high = map->entries.count;

	while (low < high) {
		int middle = low + (high - low) / 2;
		if (map->entries.items[middle].start <= address)
			low = middle + 1;
		else
			high = middle;
	}
	const struct perf_map_entry *best = NULL;
	for (int i = low - 1; i >= 0 && map->prefix_end[i] > address; i--) {
		const struct perf_map_entry *entry = &map->entries.items[i];
		if (address - entry->start < entry->size && (!best || entry->order > best->order))
			best = entry;
	}
	if (!best)
		return -ENOENT;
	*name = best->name;
	*offset = address - best->start;
	return 0;
}
