/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Event generator for the lost-events test: makes exactly N getppid system
 * calls (argv[1], default 1000) as fast as it can. syscall() is used rather
 * than getppid() so that no C library can answer from a cache.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long count = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;

	for (long i = 0; i < count; i++)
		syscall(SYS_getppid);
	return 0;
}
