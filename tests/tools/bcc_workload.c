/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A workload with known counts and values for funccount, trace, argdist and
 * stackcount (tests/runtime/tools_multi.test). It waits until the file
 * argv[1] exists (the tracer has attached; the case's run: creates it), then:
 *
 *   func_alpha(i)   called 3 times, i = 1, 2, 3; returns i * 10
 *   func_beta(i)    called 5 times, i = 0..4; returns i + 100
 *   func_gamma(7)   called 2 times, through func_outer -> func_middle
 *   malloc(n)       4 times, n = 12346..12349, from func_alloc -> func_alloc_inner
 *                   (the C library's; freed at once)
 *   USDT bcc_workload:tick(i, i * 100)  5 times, i = 1..5 (sys/sdt.h)
 *   read(/dev/zero) 4 times 100 bytes, then 6 times 4096 bytes
 *   getppid()       9 times (the syscall, not a cached value)
 *
 * and exits, or first sleeps argv[2] seconds (so that a tracer can read its
 * symbols while it lives). The functions are not inlined and have a call inside, so each
 * is a real function with its own symbol in the executable. The runner
 * builds with plain -O2; the pragma keeps frame pointers, which the kernel
 * walks for user stacks (stackcount).
 */
#pragma GCC optimize("no-omit-frame-pointer", "no-shrink-wrap", "no-optimize-sibling-calls")
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) int func_alpha(int value)
{
	sink += value;
	return value * 10;
}

__attribute__((noinline)) int func_beta(int value)
{
	sink -= value;
	return value + 100;
}

__attribute__((noinline)) int func_gamma(int value)
{
	sink ^= value;
	return value;
}

__attribute__((noinline)) int func_middle(int value)
{
	int result = func_gamma(value);
	sink++;
	return result;
}

__attribute__((noinline)) int func_outer(int value)
{
	int result = func_middle(value);
	sink++;
	return result;
}

/* two levels: a uprobe on malloc runs before malloc's frame is pushed, so
 * the user stack misses its caller's return address (func_alloc_inner's) */
__attribute__((noinline)) void *func_alloc_inner(size_t size)
{
	void *block = malloc(size);
	sink++;
	return block;
}

__attribute__((noinline)) void *func_alloc(size_t size)
{
	void *block = func_alloc_inner(size);
	sink++;
	return block;
}

int main(int argc, char **argv)
{
	struct stat status;
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	char buffer[4096];

	/* up to 60 s for the tracer to attach */
	for (int i = 0; argc > 1 && stat(argv[1], &status) != 0 && i < 6000; i++)
		nanosleep(&pause, NULL);
	for (int i = 1; i <= 3; i++)
		func_alpha(i);
	for (int i = 0; i < 5; i++)
		func_beta(i);
	for (int i = 0; i < 2; i++)
		func_outer(7);
	for (int i = 1; i <= 4; i++)
		free(func_alloc(12345 + (size_t)i));
	for (int i = 1; i <= 5; i++)
		STAP_PROBE2(bcc_workload, tick, i, i * 100);
	int fd = open("/dev/zero", O_RDONLY);
	for (int i = 0; i < 4; i++)
		sink += (int)read(fd, buffer, 100);
	for (int i = 0; i < 6; i++)
		sink += (int)read(fd, buffer, sizeof(buffer));
	close(fd);
	for (int i = 0; i < 9; i++)
		syscall(SYS_getppid);
	/* a moment for the last events to be read before the tracer sees the exit */
	nanosleep(&pause, NULL);
	if (argc > 2)
		sleep((unsigned)atoi(argv[2]));
	return 0;
}
