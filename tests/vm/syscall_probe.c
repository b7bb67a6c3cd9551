/* SPDX-License-Identifier: Apache-2.0 */
/*
 * syscall_probe: makes a few system calls whose arguments and results are
 * known, so the vm cases can check exact values seen by kprobes, kretprobes,
 * fentry and fexit.
 *
 *     syscall_probe [FILE]        (default: syscall_probe.dat in the cwd)
 *
 * In order:
 *   1. creates FILE and writes DATA_SIZE bytes to it with one write(2);
 *   2. stat(2)s FILE;
 *   3. opens FILE again and makes exactly one read(fd, buf, READ_COUNT),
 *      which returns DATA_SIZE (the whole file: READ_COUNT is larger);
 *   4. removes FILE.
 *
 * The runner links it statically: then the dynamic loader makes no read(2)
 * calls of its own, and the one vfs_read of a process named syscall_probe
 * is the read above.
 *
 * Exits 0 when every call returned what was expected; otherwise prints the
 * failing call and exits 1.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DATA_SIZE 1234  /* bytes written, and returned by the read */
#define READ_COUNT 4321 /* count passed to read(2) */

static int fail(const char *what)
{
	perror(what);
	return 1;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "syscall_probe.dat";
	static char data[DATA_SIZE], buf[READ_COUNT];
	struct stat st;
	ssize_t n;
	int fd;

	memset(data, 'x', sizeof(data));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return fail("open for writing");
	if (write(fd, data, sizeof(data)) != DATA_SIZE)
		return fail("write");
	close(fd);

	if (stat(path, &st) < 0)
		return fail("stat");
	if (st.st_size != DATA_SIZE) {
		fprintf(stderr, "stat: size %lld, expected %d\n", (long long)st.st_size, DATA_SIZE);
		return 1;
	}

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return fail("open for reading");
	n = read(fd, buf, READ_COUNT);
	if (n != DATA_SIZE) {
		fprintf(stderr, "read returned %zd, expected %d\n", n, DATA_SIZE);
		return 1;
	}
	close(fd);

	unlink(path);
	return 0;
}
