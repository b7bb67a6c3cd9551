/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Small helpers every part of sonde uses: allocation that never returns
 * NULL (a tracer that runs out of memory while compiling has nothing useful
 * left to do), a growable string buffer, and a growable array macro.
 */
#ifndef SONDE_UTIL_H
#define SONDE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *text);
char *xstrndup(const char *text, size_t length);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Growable, always NUL-terminated byte string. */
struct strbuf {
	char *data;
	size_t length;
	size_t capacity;
};

void strbuf_init(struct strbuf *sb);
void strbuf_free(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
void strbuf_append(struct strbuf *sb, const char *text, size_t length);
void strbuf_puts(struct strbuf *sb, const char *text);
void strbuf_putc(struct strbuf *sb, char c);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap);
/* Hands the buffer to the caller (who frees it) and leaves sb empty. */
char *strbuf_release(struct strbuf *sb);

/* Growable array: struct { T *items; int count, capacity; } */
#define VEC(T) struct { T *items; int count; int capacity; }
#define vec_push(v, item)                                                        \
	do {                                                                     \
		if ((v)->count == (v)->capacity) {                               \
			(v)->capacity = (v)->capacity ? (v)->capacity * 2 : 8;   \
			(v)->items = xrealloc((v)->items,                        \
					      sizeof(*(v)->items) * (v)->capacity); \
		}                                                                \
		(v)->items[(v)->count++] = (item);                               \
	} while (0)

/* Shell-style wildcard match ('*' only; '?' and '[...]' are not probe syntax). */
bool wildcard_match(const char *pattern, const char *text);
bool has_wildcard(const char *text);

/* CLOCK_MONOTONIC in nanoseconds: the clock of bpf_ktime_get_ns() and of every timeout. */
uint64_t monotonic_ns(void);

/* Reads a whole file into a NUL-terminated buffer; NULL and errno on failure. */
char *read_file(const char *path, size_t *length);

/*
 * Reads all of fd (a file, a pipe, a device) into a NUL-terminated buffer
 * (*text, caller frees), at most limit bytes: 0, -EFBIG past the limit (an
 * endless /dev/zero costs limit bytes, not all memory), -EISDIR, or another
 * -errno. read_path_bounded() opens path first.
 */
int read_fd_bounded(int fd, size_t limit, char **text, size_t *length);
int read_path_bounded(const char *path, size_t limit, char **text, size_t *length);

/* The largest program source sonde reads; real scripts are a few KiB. */
#define SOURCE_SIZE_MAX (4u << 20)
/*
 * Reads a program's source from fd (a file, a pipe, a socket or a
 * terminal), at most SOURCE_SIZE_MAX bytes. 0 with *text (NUL-terminated,
 * caller frees); -ENODEV for a device or a directory, -EFBIG for a longer
 * source, other -errno for read errors.
 */
int read_source_fd(int fd, char **text, size_t *length);

#endif
