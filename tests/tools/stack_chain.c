/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Workload with known call chains, for profile and offcputime (tools_stacks.test).
 *
 *     stack_chain cpu SECONDS     chain_main -> chain_outer -> chain_middle ->
 *                                 chain_hot reads 64 KiB of /dev/zero in a loop
 *                                 for 90% of each 10 ms, chain_cold spins in user
 *                                 mode for the other 10%
 *     stack_chain sleep SECONDS   chain_main -> chain_waiter -> chain_block
 *                                 sleeps 10 ms at a time
 *     stack_chain threads SECONDS the same in 8 threads at once: one stack, many
 *                                 threads blocked in it together
 *
 * Frame pointers are kept (the kernel walks user stacks by them) and the
 * system calls are made inline, so the innermost user frame is ours rather
 * than the C library's, which keeps no frame and would hide its caller.
 */
#pragma GCC optimize("no-omit-frame-pointer", "no-shrink-wrap", "no-optimize-sibling-calls", "no-inline")
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static char buffer[65536];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void chain_hot(int fd, double until)
{
	while (now() < until) {
		long result;
		__asm__ volatile("syscall" : "=a"(result) : "a"((long)SYS_read), "D"((long)fd),
				 "S"(buffer), "d"((long)sizeof(buffer)) : "rcx", "r11", "memory");
	}
}

__attribute__((noinline)) void chain_cold(double until)
{
	volatile unsigned long x = 0;
	while (now() < until)
		for (int i = 0; i < 1000; i++)
			x += i;
}

__attribute__((noinline)) void chain_middle(int fd, double start)
{
	chain_hot(fd, start + 0.009);
	chain_cold(start + 0.010);
}

__attribute__((noinline)) void chain_outer(int fd, double start)
{
	chain_middle(fd, start);
}

__attribute__((noinline)) void chain_block(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	long result;
	__asm__ volatile("syscall" : "=a"(result) : "a"((long)SYS_nanosleep), "D"(&ts), "S"(0L)
			 : "rcx", "r11", "memory");
}

__attribute__((noinline)) void chain_waiter(void)
{
	chain_block();
}

__attribute__((noinline)) int chain_main(const char *mode, double seconds)
{
	double end = now() + seconds;
	if (strcmp(mode, "cpu") == 0) {
		int fd = open("/dev/zero", O_RDONLY);
		if (fd < 0)
			return 1;
		for (double start = now(); start < end; start = now())
			chain_outer(fd, start);
		close(fd);
		return 0;
	}
	while (now() < end)
		chain_waiter();
	return 0;
}

static void *chain_thread(void *seconds)
{
	chain_main("sleep", *(double *)seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	double seconds = atof(argv[2]);
	if (strcmp(argv[1], "threads") == 0) {
		pthread_t threads[8];
		for (int i = 0; i < 8; i++)
			if (pthread_create(&threads[i], NULL, chain_thread, &seconds) != 0)
				return 1;
		for (int i = 0; i < 8; i++)
			pthread_join(threads[i], NULL);
		return 0;
	}
	return chain_main(argv[1], seconds);
}
