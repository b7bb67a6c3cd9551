/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Event generator for symbolizing a process that is gone before its stacks
 * are printed (runtime/symbols.test).
 *
 *     short_lived [MS]
 *
 * Spins for MS milliseconds (default 300) in sonde_short_spin, called from
 * sonde_short_outer, then exits. A profile that prints @[ustack] after that
 * can only name these functions if sonde read the process's maps while it
 * was running. Frame pointers are kept so the kernel can walk the stack.
 */
#pragma GCC optimize("no-omit-frame-pointer", "no-optimize-sibling-calls")
#include <stdlib.h>
#include <time.h>

static long now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

__attribute__((noinline)) unsigned long sonde_short_spin(long ms)
{
	volatile unsigned long sum = 0;
	long end = now_ms() + ms;

	while (now_ms() < end)
		for (int i = 0; i < 100000; i++)
			sum += (unsigned long)i;
	return sum;
}

__attribute__((noinline)) unsigned long sonde_short_outer(long ms)
{
	return sonde_short_spin(ms) + 1;
}

int main(int argc, char **argv)
{
	volatile unsigned long sink = sonde_short_outer(argc > 1 ? atol(argv[1]) : 300);

	(void)sink;
	return 0;
}
