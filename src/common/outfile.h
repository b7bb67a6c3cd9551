/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The files a user names for sonde to write (-o FILE, --svg FILE,
 * --heatmap FILE): every one goes through here, so that root's writes land
 * where the user meant and nowhere else.
 *
 * Two kinds of target. A regular file (or a name that does not exist yet)
 * is replaced whole through a temporary file that only sonde can have
 * created (mkstemp in the same directory, then rename), or streamed into
 * after an open that never follows a symbolic link. Anything else a user
 * may write to, a character device (/dev/null, a terminal), a FIFO or one
 * of sonde's own descriptors (/dev/stdout), is written where it is and
 * never replaced. A symbolic link is followed only to such a target: a
 * link to a regular file, planted or not, is refused rather than replaced
 * or written through. Directories, block devices and sockets are refused.
 *
 * outfile_prepare() decides and checks before anything runs, so that what
 * cannot be written is refused before tracing starts; the writes report
 * every failure (a full device, a full disk) as -errno.
 */
#ifndef SONDE_OUTFILE_H
#define SONDE_OUTFILE_H

#include <stddef.h>

enum outfile_kind {
	OUTFILE_REGULAR,  /* a regular file, or none yet: replaced or streamed into by name */
	OUTFILE_IN_PLACE, /* a device, a FIFO, sonde's stdout: written through fd */
};

struct outfile {
	char *path;
	enum outfile_kind kind;
	int fd; /* IN_PLACE: opened by outfile_prepare; REGULAR: -1 until outfile_open_stream */
};

/* Decides how path is written and checks that it can be (the directory
 * takes a new file; a FIFO has a reader). 0, or -errno with *message: one
 * sentence about path, without it (the caller names the option). */
int outfile_prepare(struct outfile *file, const char *path, char **message);
/* Makes data the file's whole content: a regular file is replaced at once
 * (a reader sees the old file or the new, never half), a device or FIFO is
 * written to. 0 or -errno. */
int outfile_replace(struct outfile *file, const void *data, size_t length);
/* A descriptor to stream output into: a regular file is created or
 * truncated now (never through a symbolic link); a device or FIFO is the
 * descriptor prepared. The caller owns it from then on. fd or -errno. */
int outfile_open_stream(struct outfile *file);
/* Closes what the outfile holds open. */
void outfile_close(struct outfile *file);

#endif
