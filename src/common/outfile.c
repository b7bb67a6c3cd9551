/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writing the files a user names; see outfile.h for the rules. The checks
 * are made on what the name is now (lstat), and the writes are made so
 * that a change in between cannot redirect them: a temporary name is
 * created exclusively, rename() replaces a directory entry without
 * following it, a regular file is opened with O_NOFOLLOW, and a device or
 * FIFO is opened without O_CREAT and checked again through its descriptor.
 */
#include "common/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

/* Written where it is: a character device or a FIFO (sockets cannot be
 * opened, block devices are disks). */
static bool outfile_in_place_mode(mode_t mode)
{
	return S_ISCHR(mode) || S_ISFIFO(mode);
}

/* The directory part of path ("." for a bare name). */
static char *outfile_directory(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

/* A new, empty, exclusively created file beside path, named after it
 * (.NAME.XXXXXX: hidden, and no name anyone could plant in advance);
 * *temporary is its name. fd or -errno. */
static int outfile_temporary(const char *path, char **temporary)
{
	const char *slash = strrchr(path, '/');
	char *directory = outfile_directory(path);
	*temporary = xasprintf("%s/.%s.XXXXXX", directory, slash ? slash + 1 : path);
	free(directory);

	int fd = mkostemp(*temporary, O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;
		free(*temporary);
		*temporary = NULL;
		return err;
	}
	/* mkstemp makes it 0600; a file sonde writes is as open(2)'s 0666
	 * would make it, less the umask */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	return fd;
}

/* Whether st is the file one of sonde's own standard descriptors is. */
static int outfile_own_descriptor(const struct stat *st)
{
	for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++) {
		struct stat own;
		if (fstat(fd, &own) == 0 && own.st_dev == st->st_dev && own.st_ino == st->st_ino)
			return fd;
	}
	return -1;
}

/* A device or FIFO, opened without creating anything and without waiting
 * for a FIFO's reader, then checked through the descriptor: the name may
 * have changed since it was looked at. */
static int outfile_open_in_place(struct outfile *file, char **message)
{
	int fd = open(file->path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (fd < 0) {
		int err = -errno;
		*message = err == -ENXIO ? xstrdup("no process has the FIFO open for reading")
					 : xasprintf("cannot open it: %s", strerror(-err));
		return err;
	}
	if (fstat(fd, &st) != 0 || !outfile_in_place_mode(st.st_mode)) {
		close(fd);
		*message = xstrdup("it changed while sonde opened it");
		return -EAGAIN;
	}
	/* writes may wait for a slow reader, as they would on stdout */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	file->fd = fd;
	return 0;
}

/* A regular file (or none yet) is only ever replaced or created through its
 * directory: check that a new file can be made there. */
static int outfile_check_directory(const struct outfile *file, char **message)
{
	char *temporary;
	int fd = outfile_temporary(file->path, &temporary);

	if (fd < 0) {
		char *directory = outfile_directory(file->path);
		*message = xasprintf("cannot create a file in %s: %s", directory, strerror(-fd));
		free(directory);
		return fd;
	}
	close(fd);
	unlink(temporary);
	free(temporary);
	return 0;
}

int outfile_prepare(struct outfile *file, const char *path, char **message)
{
	struct stat st;

	file->path = xstrdup(path);
	file->kind = OUTFILE_REGULAR;
	file->fd = -1;
	*message = NULL;
	if (lstat(path, &st) != 0) {
		if (errno != ENOENT) {
			int err = -errno;
			*message = xasprintf("%s", strerror(errno));
			return err;
		}
		return outfile_check_directory(file, message);
	}
	if (S_ISREG(st.st_mode))
		return outfile_check_directory(file, message);
	if (S_ISLNK(st.st_mode)) {
		struct stat target;
		if (stat(path, &target) == 0 && outfile_in_place_mode(target.st_mode)) {
			file->kind = OUTFILE_IN_PLACE;
			return outfile_open_in_place(file, message);
		}
		/* /dev/stdout when stdout is a file: write through the
		 * descriptor sonde has, at its offset */
		int own = stat(path, &target) == 0 && S_ISREG(target.st_mode)
				  ? outfile_own_descriptor(&target) : -1;
		if (own >= 0) {
			file->kind = OUTFILE_IN_PLACE;
			file->fd = fcntl(own, F_DUPFD_CLOEXEC, 3);
			if (file->fd < 0) {
				int err = -errno;
				*message = xasprintf("cannot use it: %s", strerror(errno));
				return err;
			}
			return 0;
		}
		*message = xstrdup("is a symbolic link; sonde follows links only to devices and FIFOs, "
				   "never to a file it would replace or truncate: name the file itself");
		return -ELOOP;
	}
	if (outfile_in_place_mode(st.st_mode)) {
		file->kind = OUTFILE_IN_PLACE;
		return outfile_open_in_place(file, message);
	}
	if (S_ISDIR(st.st_mode)) {
		*message = xstrdup("is a directory");
		return -EISDIR;
	}
	*message = xstrdup(S_ISBLK(st.st_mode) ? "is a block device, which sonde does not write to"
					       : "is a socket, which sonde cannot write to");
	return -EINVAL;
}

/* Writes all of data to fd, retrying interrupted and short writes. */
static int outfile_write_all(int fd, const void *data, size_t length)
{
	const char *next = data;

	while (length) {
		ssize_t written = write(fd, next, length);
		if (written < 0 && errno == EINTR)
			continue;
		if (written <= 0)
			return written < 0 ? -errno : -EIO;
		next += written;
		length -= (size_t)written;
	}
	return 0;
}

int outfile_replace(struct outfile *file, const void *data, size_t length)
{
	if (file->kind == OUTFILE_IN_PLACE)
		return outfile_write_all(file->fd, data, length);

	char *temporary;
	int fd = outfile_temporary(file->path, &temporary);
	if (fd < 0)
		return fd;
	int err = outfile_write_all(fd, data, length);
	/* some file systems (NFS) report a failed write only at close */
	if (close(fd) != 0 && !err)
		err = -errno;
	if (!err && rename(temporary, file->path) != 0)
		err = -errno;
	if (err)
		unlink(temporary);
	free(temporary);
	return err;
}

int outfile_open_stream(struct outfile *file)
{
	int fd = file->fd;

	file->fd = -1;
	if (fd >= 0)
		return fd;
	fd = open(file->path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
	return fd >= 0 ? fd : -errno;
}

void outfile_close(struct outfile *file)
{
	if (file->fd >= 0)
		close(file->fd);
	file->fd = -1;
	free(file->path);
	file->path = NULL;
}
