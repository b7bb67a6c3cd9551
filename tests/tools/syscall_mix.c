/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Event generator for the syscall-tracepoint tests: makes a known set of
 * system calls a known number of times, through syscall() so that no C
 * library answers from a cache or picks another call:
 *
 *   getppid x3, getuid x5, getgid x7,
 *   openat(AT_FDCWD, "/nonexistent/sonde-scale", O_RDONLY)   -> -ENOENT
 *   openat(AT_FDCWD, "/dev/zero", O_RDONLY), read 7 bytes into a page mapped
 *   at READ_BUFFER (so that a test can expect args->buf's value), pread64 3
 *   bytes at offset 12345, close.
 *
 * With an argument, it first waits (up to 10 s) until that file exists, so
 * that a tracer started on its pid (-p) is attached before the calls.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define READ_BUFFER 0x5e0de000UL

static void repeat(long number, int times)
{
	for (int i = 0; i < times; i++)
		syscall(number);
}

int main(int argc, char **argv)
{
	/* on the stack, which is paged in: a tracer reading the name from a
	 * page of .rodata not yet touched would read nothing */
	char missing[] = "/nonexistent/sonde-scale";
	char buffer[16];
	void *page;
	long fd;

	if (argc > 1) {
		struct timespec tick = { 0, 10 * 1000 * 1000 };

		for (int i = 0; i < 1000 && access(argv[1], F_OK) != 0; i++)
			nanosleep(&tick, NULL);
	}
	page = mmap((void *)READ_BUFFER, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (page != (void *)READ_BUFFER) {
		perror("mmap at READ_BUFFER");
		return 1;
	}
	repeat(SYS_getppid, 3);
	repeat(SYS_getuid, 5);
	repeat(SYS_getgid, 7);
	syscall(SYS_openat, AT_FDCWD, missing, O_RDONLY);
	fd = syscall(SYS_openat, AT_FDCWD, "/dev/zero", O_RDONLY);
	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	syscall(SYS_read, fd, page, 7);
	syscall(SYS_pread64, fd, buffer, 3, 12345);
	syscall(SYS_close, fd);
	return 0;
}
