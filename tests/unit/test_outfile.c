/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of outfile.c, the one way sonde writes a file a user names: what
 * each kind of target becomes (replaced whole, written in place, refused),
 * and that a replacement neither follows nor leaves anything in the
 * directory. Everything happens in a fresh temporary directory.
 *
 * Prints PASS/FAIL per case and a closing `N passed, N failed` line; exits
 * nonzero on any failure.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "common/outfile.h"
#include "common/util.h"

static char directory[] = "/tmp/sonde-outfile-XXXXXX";

static char *in_dir(const char *name)
{
	return xasprintf("%s/%s", directory, name);
}

static char *contents(const char *path)
{
	char *text = NULL;
	size_t length;
	return read_path_bounded(path, 1 << 20, &text, &length) == 0 ? text : NULL;
}

static int entries(void)
{
	DIR *dir = opendir(directory);
	int count = 0;
	for (struct dirent *entry; (entry = readdir(dir));)
		count += entry->d_name[0] != '.' || (strcmp(entry->d_name, ".") &&
						      strcmp(entry->d_name, ".."));
	closedir(dir);
	return count;
}

/* A new name and an existing regular file are replaced whole, and nothing
 * else is left in the directory. */
static bool test_regular_replaced(void)
{
	char *path = in_dir("picture.svg"), *message = NULL, *text;
	struct outfile file;
	int before = entries();

	EXPECT(outfile_prepare(&file, path, &message) == 0, "prepare: %s", message);
	EXPECT(file.kind == OUTFILE_REGULAR && file.fd < 0, "kind %d fd %d", file.kind, file.fd);
	EXPECT(entries() == before, "prepare left a file behind");
	EXPECT(outfile_replace(&file, "first", 5) == 0, "first replace");
	EXPECT(outfile_replace(&file, "second", 6) == 0, "second replace");
	text = contents(path);
	EXPECT(text && strcmp(text, "second") == 0, "contents '%s'", text ? text : "(none)");
	EXPECT(entries() == before + 1, "%d entries, expected %d", entries(), before + 1);
	free(text);
	outfile_close(&file);
	unlink(path);
	free(path);
	return true;
}

/* A link to a regular file is refused, and neither it nor its target changes. */
static bool test_link_refused(void)
{
	char *target = in_dir("target"), *link = in_dir("link"), *message = NULL, *text;
	struct outfile file;
	FILE *out = fopen(target, "w");

	fputs("keep", out);
	fclose(out);
	EXPECT(symlink("target", link) == 0, "symlink: %s", strerror(errno));
	EXPECT(outfile_prepare(&file, link, &message) == -ELOOP, "not refused");
	EXPECT(message && strstr(message, "symbolic link"), "message '%s'", message ? message : "");
	text = contents(target);
	EXPECT(text && strcmp(text, "keep") == 0, "target changed");
	free(text);
	free(message);
	outfile_close(&file);
	unlink(link);
	unlink(target);
	free(link);
	free(target);
	return true;
}

/* A FIFO with no reader is refused at once (no wait); one with a reader
 * is written in place and stays a FIFO. */
static bool test_fifo(void)
{
	char *path = in_dir("fifo"), *message = NULL;
	struct outfile file;
	struct stat st;

	EXPECT(mkfifo(path, 0600) == 0, "mkfifo: %s", strerror(errno));
	EXPECT(outfile_prepare(&file, path, &message) == -ENXIO, "no reader: not refused");
	EXPECT(message && strstr(message, "reading"), "message '%s'", message ? message : "");
	free(message);
	outfile_close(&file);

	int reader = open(path, O_RDONLY | O_NONBLOCK);
	EXPECT(reader >= 0, "reader: %s", strerror(errno));
	EXPECT(outfile_prepare(&file, path, &message) == 0, "prepare: %s", message);
	EXPECT(file.kind == OUTFILE_IN_PLACE && file.fd >= 0, "kind %d fd %d", file.kind, file.fd);
	EXPECT(outfile_replace(&file, "svg", 3) == 0, "write");
	char got[8] = { 0 };
	EXPECT(read(reader, got, sizeof(got)) == 3 && strcmp(got, "svg") == 0, "read '%s'", got);
	EXPECT(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode), "no longer a FIFO");
	close(reader);
	outfile_close(&file);
	unlink(path);
	free(path);
	return true;
}

/* A directory is refused; a stream into a new name is a new regular file. */
static bool test_directory_and_stream(void)
{
	char *path = in_dir("out.txt"), *message = NULL;
	struct outfile file;

	EXPECT(outfile_prepare(&file, directory, &message) == -EISDIR, "directory not refused");
	free(message);
	outfile_close(&file);
	EXPECT(outfile_prepare(&file, path, &message) == 0, "prepare: %s", message);
	int fd = outfile_open_stream(&file);
	EXPECT(fd >= 0, "open: %s", strerror(-fd));
	EXPECT(write(fd, "line\n", 5) == 5, "write");
	close(fd);
	char *text = contents(path);
	EXPECT(text && strcmp(text, "line\n") == 0, "contents");
	free(text);
	outfile_close(&file);
	unlink(path);
	free(path);
	return true;
}

/* A directory that is not there is said before anything is written. */
static bool test_missing_directory(void)
{
	char *path = in_dir("nowhere/x.svg"), *message = NULL;
	struct outfile file;

	EXPECT(outfile_prepare(&file, path, &message) == -ENOENT, "not refused");
	EXPECT(message && strstr(message, "cannot create a file in"), "message '%s'",
	       message ? message : "");
	free(message);
	outfile_close(&file);
	free(path);
	return true;
}

int main(void)
{
	if (!mkdtemp(directory)) {
		perror("mkdtemp");
		return 1;
	}
	run("regular_replaced", test_regular_replaced);
	run("link_refused", test_link_refused);
	run("fifo", test_fifo);
	run("directory_and_stream", test_directory_and_stream);
	run("missing_directory", test_missing_directory);
	rmdir(directory);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
