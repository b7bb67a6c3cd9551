/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The program's output stream: stdio's buffering over write(2) calls that
 * neither give up nor fail silently.
 *
 * A plain FILE loses data in two ways that matter to a tracer. A signal
 * (Ctrl-C, the -c child ending) that interrupts a write blocked on a slow
 * reader makes write(2) fail with EINTR, and stdio then throws the rest of
 * its buffer away; and a failed write (a full disk, /dev/full, a closed
 * stdout) only sets a flag whose errno is long gone by the time anyone
 * looks. The cookie stream below writes everything it is given, retrying
 * interrupted and short writes, and keeps the errno of the first failure so
 * that the run can stop and say what went wrong.
 */
#include "runtime/load.h"

#include <errno.h>
#include <unistd.h>

static ssize_t output_sink_write(void *cookie, const char *data, size_t size)
{
	struct output_sink *sink = cookie;
	size_t done = 0;

	if (sink->error)
		return -1;
	while (done < size) {
		ssize_t written = write(sink->fd, data + done, size - done);

		if (written < 0 && errno == EINTR)
			continue;
		if (written <= 0) {
			sink->error = written < 0 ? errno : EIO;
			return -1;
		}
		done += (size_t)written;
	}
	return (ssize_t)size;
}

static int output_sink_close(void *cookie)
{
	struct output_sink *sink = cookie;

	/* Some file systems (NFS) report a failed write only here. */
	if (sink->owns_fd && close(sink->fd) != 0 && !sink->error)
		sink->error = errno;
	return sink->error ? -1 : 0;
}

FILE *output_sink_open(struct output_sink *sink, int fd, bool owns_fd)
{
	cookie_io_functions_t functions = {
		.write = output_sink_write,
		.close = output_sink_close,
	};
	FILE *file;

	sink->fd = fd;
	sink->owns_fd = owns_fd;
	sink->error = 0;
	file = fopencookie(sink, "w", functions);
	if (!file)
		return NULL;
	/* One write(2) per ring-buffer batch rather than one per 4 KiB; a
	 * terminal keeps line buffering so output appears as it happens. */
	if (isatty(fd))
		setvbuf(file, NULL, _IOLBF, 0);
	else
		setvbuf(file, NULL, _IOFBF, 1 << 16);
	return file;
}
