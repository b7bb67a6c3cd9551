/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Small helpers shared by every phase: allocation that cannot fail, a
 * growable string buffer, '*'-only wildcard matching for probe names, and
 * reading a whole file.
 *
 * Allocation failure aborts with a message rather than returning NULL: a
 * tracer that runs out of memory while compiling or printing has nothing
 * better to do, and removing the NULL checks from every caller keeps the
 * rest of the code about what it means to do.
 */
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void util_out_of_memory(size_t size)
{
	fprintf(stderr, "sonde: out of memory (allocating %zu bytes)\n", size);
	abort();
}

void *xmalloc(size_t size)
{
	void *ptr = malloc(size ? size : 1);

	if (!ptr)
		util_out_of_memory(size);
	return ptr;
}

void *xcalloc(size_t count, size_t size)
{
	void *ptr = calloc(count ? count : 1, size ? size : 1);

	if (!ptr)
		util_out_of_memory(count * size);
	return ptr;
}

void *xrealloc(void *ptr, size_t size)
{
	void *grown = realloc(ptr, size ? size : 1);

	if (!grown)
		util_out_of_memory(size);
	return grown;
}

char *xstrdup(const char *text)
{
	return xstrndup(text, strlen(text));
}

/* Copies exactly `length` bytes (which may include NULs) and terminates. */
char *xstrndup(const char *text, size_t length)
{
	char *copy = xmalloc(length + 1);

	memcpy(copy, text, length);
	copy[length] = '\0';
	return copy;
}

char *xasprintf(const char *fmt, ...)
{
	struct strbuf sb;
	va_list ap;

	strbuf_init(&sb);
	va_start(ap, fmt);
	strbuf_vprintf(&sb, fmt, ap);
	va_end(ap);
	return strbuf_release(&sb);
}

/* ---- strbuf ---- */

void strbuf_init(struct strbuf *sb)
{
	sb->data = NULL;
	sb->length = 0;
	sb->capacity = 0;
}

void strbuf_free(struct strbuf *sb)
{
	free(sb->data);
	strbuf_init(sb);
}

void strbuf_reset(struct strbuf *sb)
{
	sb->length = 0;
	if (sb->data)
		sb->data[0] = '\0';
}

/* Makes room for `extra` more bytes plus the terminating NUL. */
static void strbuf_reserve(struct strbuf *sb, size_t extra)
{
	size_t needed = sb->length + extra + 1;
	size_t capacity;

	if (needed <= sb->capacity)
		return;
	capacity = sb->capacity ? sb->capacity : 32;
	while (capacity < needed)
		capacity *= 2;
	sb->data = xrealloc(sb->data, capacity);
	sb->capacity = capacity;
	sb->data[sb->length] = '\0'; /* always a string, even before the first append */
}

void strbuf_append(struct strbuf *sb, const char *text, size_t length)
{
	strbuf_reserve(sb, length);
	if (length)
		memcpy(sb->data + sb->length, text, length);
	sb->length += length;
	sb->data[sb->length] = '\0';
}

void strbuf_puts(struct strbuf *sb, const char *text)
{
	strbuf_append(sb, text, strlen(text));
}

void strbuf_putc(struct strbuf *sb, char c)
{
	strbuf_append(sb, &c, 1);
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vprintf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	char small[256];
	va_list measure;
	int needed;

	/* Most messages fit the stack buffer; longer ones are formatted twice. */
	va_copy(measure, ap);
	needed = vsnprintf(small, sizeof(small), fmt, measure);
	va_end(measure);
	if (needed < 0)
		return;
	if ((size_t)needed < sizeof(small)) {
		strbuf_append(sb, small, (size_t)needed);
		return;
	}
	strbuf_reserve(sb, (size_t)needed);
	vsnprintf(sb->data + sb->length, (size_t)needed + 1, fmt, ap);
	sb->length += (size_t)needed;
}

char *strbuf_release(struct strbuf *sb)
{
	char *data = sb->data;

	if (!data)
		data = xstrdup("");
	strbuf_init(sb);
	return data;
}

/* ---- wildcards ---- */

/*
 * Greedy match with backtracking to the most recent '*' only: when a later
 * literal run fails, the last star absorbs one more character and we retry.
 * That is enough for '*'-only patterns and runs in O(n*m) worst case, never
 * exponential.
 */
bool wildcard_match(const char *pattern, const char *text)
{
	const char *star = NULL;
	const char *resume = NULL;

	while (*text) {
		if (*pattern == '*') {
			star = pattern++;
			resume = text;
		} else if (*pattern == *text) {
			pattern++;
			text++;
		} else if (star) {
			pattern = star + 1;
			text = ++resume;
		} else {
			return false;
		}
	}
	while (*pattern == '*')
		pattern++;
	return *pattern == '\0';
}

bool has_wildcard(const char *text)
{
	return strchr(text, '*') != NULL;
}

/* ---- time ---- */

uint64_t monotonic_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

/* ---- files ---- */

/*
 * Reads until EOF rather than trusting st_size: files under /proc and
 * /sys report a size of 0 or 4096 regardless of their content.
 */
char *read_file(const char *path, size_t *length)
{
	struct strbuf sb;
	char chunk[8192];
	FILE *file;
	size_t got;
	int saved_errno;

	file = fopen(path, "rb");
	if (!file)
		return NULL;
	strbuf_init(&sb);
	strbuf_reserve(&sb, 0);
	while ((got = fread(chunk, 1, sizeof(chunk), file)) > 0)
		strbuf_append(&sb, chunk, got);
	if (ferror(file)) {
		saved_errno = errno ? errno : EIO;
		fclose(file);
		strbuf_free(&sb);
		errno = saved_errno;
		return NULL;
	}
	fclose(file);
	if (length)
		*length = sb.length;
	return strbuf_release(&sb);
}

int read_fd_bounded(int fd, size_t limit, char **text, size_t *length)
{
	struct strbuf sb;
	struct stat status;
	char chunk[8192];

	*text = NULL;
	if (fstat(fd, &status) < 0)
		return -errno;
	if (S_ISDIR(status.st_mode))
		return -EISDIR;
	if (S_ISREG(status.st_mode) && (uint64_t)status.st_size > limit)
		return -EFBIG;
	strbuf_init(&sb);
	strbuf_reserve(&sb, 0);
	for (;;) {
		ssize_t got = read(fd, chunk, sizeof(chunk));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int error = -errno;
			strbuf_free(&sb);
			return error;
		}
		if (got == 0)
			break;
		if (sb.length + (size_t)got > limit) {
			strbuf_free(&sb);
			return -EFBIG;
		}
		strbuf_append(&sb, chunk, (size_t)got);
	}
	*length = sb.length;
	*text = strbuf_release(&sb);
	return 0;
}

int read_path_bounded(const char *path, size_t limit, char **text, size_t *length)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*text = NULL;
	if (fd < 0)
		return -errno;
	int err = read_fd_bounded(fd, limit, text, length);
	close(fd);
	return err;
}

/*
 * A program is text someone wrote, so anything that is not a file, a pipe,
 * a socket or a terminal (/dev/zero, /dev/urandom, a disk) is refused before
 * reading it: a program there would be garbage, or endless.
 * Pipes are read up to the limit and no further: `cat /dev/zero | sonde -`
 * costs SOURCE_SIZE_MAX bytes, not all memory.
 */
int read_source_fd(int fd, char **text, size_t *length)
{
	struct stat status;

	*text = NULL;
	if (fstat(fd, &status) < 0)
		return -errno;
	if (!S_ISDIR(status.st_mode) && !S_ISREG(status.st_mode) && !S_ISFIFO(status.st_mode) &&
	    !S_ISSOCK(status.st_mode) && !isatty(fd))
		return -ENODEV;
	return read_fd_bounded(fd, SOURCE_SIZE_MAX, text, length);
}
